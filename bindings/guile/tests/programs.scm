;;; Programs beyond build-program: binaries back into a program, separate
;;; compilation with headers and linking, and their failures with logs.
(use-modules (clgc) (clgc-test) (rnrs bytevectors))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))

(define (clgc-error-named? name)
  (lambda (e) (and (clgc-error? e) (equal? (clgc-error-name e) name))))

;; Run saxpy of 2 * x + y over four floats with program's kernel.
(define (saxpy-with program)
  (let ((kernel (make-kernel program "saxpy"))
        (x (make-buffer context '(read-only)
                        (floats->bytevector '(1.0 2.0 3.0 4.0))))
        (y (make-buffer context '(read-write)
                        (floats->bytevector '(10.0 10.0 10.0 10.0)))))
    (set-kernel-args! kernel '(2.0 . float) x y)
    (wait-for-events (list (enqueue-kernel queue kernel 4)))
    (bytevector->floats (read-buffer! queue y (make-bytevector 16)))))

;; Binaries: what program-info gives, made into a program again.
(let* ((built (build-program (make-program context saxpy-source)))
       (binaries (program-info built 'binaries))
       (again (make-program-with-binaries context (list device) binaries)))
  (check "program-info gives one bytevector per device"
         (and (= (length binaries) 1) (bytevector? (car binaries))
              (> (bytevector-length (car binaries)) 0)))
  (build-program again)
  (check "a program from those binaries runs"
         (equal? (saxpy-with again) '(12.0 14.0 16.0 18.0)))
  (check-raises "a binary that is none: an OpenCL error (at creation or build)"
                (lambda (e) (clgc-error? e))
                (lambda ()
                  (build-program
                   (make-program-with-binaries context (list device)
                                               (list (make-bytevector 64 7))))))
  (check-raises "one bytevector per device"
                (lambda (e) (not (clgc-error? e)))
                (lambda () (make-program-with-binaries context (list device)
                                                       '()))))

;; Separate compilation: a header program, a program that includes it,
;; compiled with the header and an option, then linked.
(let* ((header (make-program context
                             "float twice(float v) { return 2.0f * v; }\n"))
       (main (make-program context "
#include \"twice.h\"
__kernel void saxpy(float a, __global const float *x, __global float *y)
{
    size_t i = get_global_id(0);
    y[i] = twice(x[i]) * (a / 2.0f) + y[i] + OFFSET;
}"))
       (compiled (compile-program main #:options "-DOFFSET=0.0f"
                                  #:headers (list (cons "twice.h" header))))
       (linked (link-program context (list compiled))))
  (check "compile-program returns the program" (eq? compiled main))
  (check "link-program makes a new program" (cl-program? linked))
  (check "which runs"
         (equal? (saxpy-with linked) '(12.0 14.0 16.0 18.0))))

(let ((e (check-raises "a compile error: CL_COMPILE_PROGRAM_FAILURE"
                       (clgc-error-named? "CL_COMPILE_PROGRAM_FAILURE")
                       (lambda ()
                         (compile-program
                          (make-program context "__kernel void k() { nope }"))))))
  (check "with the build log"
         (and e (string? (clgc-error-build-log e))
              (> (string-length (clgc-error-build-log e)) 0))))
(check-raises "a link with a function missing: CL_LINK_PROGRAM_FAILURE"
              (clgc-error-named? "CL_LINK_PROGRAM_FAILURE")
              (lambda ()
                (link-program
                 context
                 (list (compile-program
                        (make-program context "
float missing(float v);
__kernel void k(__global float *o) { o[0] = missing(o[0]); }"))))))
;; A local-memory argument: a size, with 'local.
(let* ((program (build-program (make-program context "
__kernel void stage(__local float *scratch, __global float *io)
{
    size_t i = get_local_id(0);
    scratch[i] = io[i] * 3.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    io[i] = scratch[3 - i];
}")))
       (kernel (make-kernel program "stage"))
       (io (make-buffer context '(read-write)
                        (floats->bytevector '(1.0 2.0 3.0 4.0)))))
  (set-kernel-arg! kernel 0 16 'local)
  (set-kernel-arg! kernel 1 io)
  (wait-for-events (list (enqueue-kernel queue kernel 4 4)))
  (check "a local-memory argument, shared by a work-group"
         (equal? (bytevector->floats (read-buffer! queue io (make-bytevector 16)))
                 '(12.0 9.0 6.0 3.0))))
(check-raises "headers that are no alist"
              (lambda (e) (not (clgc-error? e)))
              (lambda () (compile-program (make-program context "")
                                          #:headers '(1 2))))
(test-exit)
