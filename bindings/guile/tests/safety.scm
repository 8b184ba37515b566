;;; What crashed Guile and not Lua (issue 45), each now an error in
;;; Scheme or a launch that computes: the library's kernel-argument table
;;; (clgc/binding.h) checks every argument against what the kernel
;;; declares and holds the objects set as arguments.
(use-modules (clgc) (clgc-test) (rnrs bytevectors) (ice-9 exceptions))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))
(define program (build-program (make-program context saxpy-source)))

(define (says? e text)
  (string-contains (call-with-output-string
                    (lambda (port) (write (exception-args e) port)))
                   text))
(define (y-buffer)
  (make-buffer context '(read-write)
               (floats->bytevector '(10.0 10.0 10.0 10.0))))
(define (x-buffer)
  (make-buffer context '(read-only) (floats->bytevector '(1.0 2.0 3.0 4.0))))
(define (run kernel y)
  (wait-for-events (list (enqueue-kernel queue kernel 4)))
  (bytevector->floats (read-buffer! queue y (make-bytevector 16))))

;; A fresh buffer set as an argument, dropped and collected, then the
;; launch: the kernel's table holds it (was SIGABRT 5 of 5).
(let ((kernel (make-kernel program "saxpy"))
      (y (y-buffer)))
  (set-kernel-arg! kernel 0 2.0 'float)
  (set-kernel-arg! kernel 1 (x-buffer))
  (set-kernel-arg! kernel 2 y)
  (gc)
  (gc)
  (check "a dropped buffer argument, collected, still computes"
         (equal? (run kernel y) '(12.0 14.0 16.0 18.0))))

;; A buffer released by hand while it is an argument (was SIGABRT).
(let ((kernel (make-kernel program "saxpy"))
      (x (x-buffer))
      (y (y-buffer)))
  (set-kernel-args! kernel '(2.0 . float) x y)
  (release x)
  (check "a released buffer argument still computes"
         (equal? (run kernel y) '(12.0 14.0 16.0 18.0)))
  (release kernel))

;; A number, or 8 bytes, where the kernel takes a __global pointer (was
;; SIGSEGV inside clSetKernelArg): Guile's wrong-type-arg, naming the
;; kernel's argument.
(let ((kernel (make-kernel program "saxpy")))
  (let ((e (check-raises "a long for a __global pointer" wrong-type?
                         (lambda () (set-kernel-arg! kernel 1 12345 'long)))))
    (check "the message names the argument and what it takes"
           (and e (says? e "argument 1 (x) of kernel saxpy is a __global"))))
  (check-raises "8 bytes for a __global pointer" wrong-type?
                (lambda () (set-kernel-arg! kernel 2 (make-bytevector 8 0))))
  (check-raises "local memory for a __global pointer" wrong-type?
                (lambda () (set-kernel-arg! kernel 1 16 'local)))
  (check-raises "a buffer for a float" wrong-type?
                (lambda () (set-kernel-arg! kernel 0 (x-buffer))))
  (check-raises "a double for a float: its size"
                (cl-error? "CL_INVALID_ARG_SIZE")
                (lambda () (set-kernel-arg! kernel 0 2.0 'double)))
  (check-raises "an image for a buffer" wrong-type?
                (lambda ()
                  (set-kernel-arg! kernel 1
                                   (make-image context '(rgba float) '(4 2)))))
  ;; One argument set through the table, the others not: the launch is
  ;; refused, naming the first one not set.
  (set-kernel-arg! kernel 0 2.0 'float)
  (let ((e (check-raises "a launch with arguments not set"
                         (cl-error? "CL_INVALID_KERNEL_ARGS")
                         (lambda () (enqueue-kernel queue kernel 4)))))
    (check "the message names the argument"
           (and e (says? e "argument 1 (x) of kernel saxpy is not set")))))

;; More local memory than the device has (was an abort in PoCL at the
;; launch).
(let* ((p (build-program
           (make-program context "
__kernel void f(__local float *t, __global float *o) { t[0] = 1; o[0] = t[0]; }")))
       (kernel (make-kernel p "f"))
       (limit (device-info device 'local-mem-size)))
  (check-raises "local memory beyond the device's"
                (cl-error? "CL_INVALID_ARG_SIZE")
                (lambda () (set-kernel-arg! kernel 0 (+ limit 1) 'local)))
  (set-kernel-arg! kernel 0 16 'local)
  (set-kernel-arg! kernel 1 (make-buffer context '(read-write) 4))
  (wait-for-events (list (enqueue-kernel queue kernel 1)))
  (check "local memory within the device's launches" #t))

;; Buffers and images told apart: image-info of a buffer answered a
;; width of 0, write-buffer! took an image.
(let ((buf (x-buffer))
      (image (make-image context '(rgba float) '(4 2))))
  (check "cl-image? of an image" (cl-image? image))
  (check "not cl-image? of a buffer" (not (cl-image? buf)))
  (check "not cl-image? of a number" (not (cl-image? 42)))
  (check-raises "image-info of a buffer" wrong-type?
                (lambda () (image-info buf 'width)))
  (check-raises "write-buffer! into an image" wrong-type?
                (lambda () (write-buffer! queue image (make-bytevector 16))))
  (check-raises "read-buffer! from an image" wrong-type?
                (lambda () (read-buffer! queue image (make-bytevector 16)))))

;; A local size of 0 (SIGFPE in PoCL under OCaml's binding).
(let ((kernel (make-kernel program "saxpy")))
  (set-kernel-args! kernel '(2.0 . float) (x-buffer) (y-buffer))
  (check-raises "a local size of 0" wrong-type?
                (lambda () (enqueue-kernel queue kernel 4 0))))

;; Binaries that are junk: a byte, or a binary's first 16 bytes (was
;; SIGSEGV: PoCL reads a header before it checks the length), or a real
;; one cut in half (an assertion in PoCL, aborting).
(let ((real (car (program-info program 'binaries))))
  (for-each
   (lambda (name bv)
     (check-raises name clgc-error?
                   (lambda ()
                     (build-program
                      (make-program-with-binaries context (list device)
                                                  (list bv))))))
   '("a 1-byte binary" "a binary cut to 16 bytes" "a binary cut in half")
   (list (make-bytevector 1 1)
         (let ((b (make-bytevector 16))) (bytevector-copy! real 0 b 0 16) b)
         (let* ((n (quotient (bytevector-length real) 2))
                (b (make-bytevector n)))
           (bytevector-copy! real 0 b 0 n)
           b)))
  (check-raises "an empty binary" (cl-error? "CL_INVALID_VALUE")
                (lambda ()
                  (make-program-with-binaries context (list device)
                                              (list (make-bytevector 0))))))

;; Strings with a NUL inside: refused, not cut short where C reads them.
(check-raises "a kernel name with a NUL inside" wrong-type?
              (lambda () (make-kernel program "saxpy\x00;x")))
(check-raises "build options with a NUL inside" wrong-type?
              (lambda () (build-program (make-program context saxpy-source)
                                        "-DX=1\x00; -DY")))
(check-raises "an info key with a NUL inside" wrong-type?
              (lambda () (device-info device (string->symbol "name\x00;x"))))

(test-exit)
