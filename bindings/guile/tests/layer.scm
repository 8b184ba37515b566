;;; A Guile program that calls libOpenCL through (system foreign) only,
;;; never the (clgc) module, run with libclgc-layer and CLGC_RUNTIME=guile
;;; (docs/layer.md): the layer asks Guile to load the binding's runtime
;;; alone. One Guile thread builds a program and waits in clWaitForEvents
;;; for a kernel held back by a user event while the main thread collects:
;;; bdwgc never suspends it (every OpenCL call is inside scm_without_guile).
;;; A Scheme procedure handed to clSetEventCallback through
;;; procedure->pointer, which PoCL calls on a thread of its own, runs there
;;; with Guile entered (plain Guile crashes there: CONTEXT.md). The same
;;; program without the layer (run again as a child, --without-layer, with
;;; no callback) is suspended by every collection. Counts, never
;;; durations: bdwgc's own thread events, through the gcwatch helper.
(use-modules (system foreign) (rnrs bytevectors) (ice-9 threads)
             (ice-9 atomic) (clgc-check))

(define with-layer? (not (member "--without-layer" (command-line))))
;; --break-build: a kernel the compiler rejects, so that the worker
;; thread's build fails (harness.scm: the test must then fail at once,
;; not wait for the worker for ever).
(define break-build? (member "--break-build" (command-line)))

;; The environment the layer reads at the process's first OpenCL call
;; (the loader initialises its layers there): set before it.
(define layer-file
  (string-append (getenv "CLGC_GUILE_BUILDDIR") "/../../.libs/libclgc-layer.so"))
(if with-layer?
    (begin
      (setenv "OPENCL_LAYERS" layer-file)
      (setenv "CLGC_RUNTIME" "guile"))
    (unsetenv "OPENCL_LAYERS"))

(load-extension (getenv "CLGC_GUILE_GCWATCH") "scm_init_clgc_gcwatch")

;;; libOpenCL, by hand.
(define libcl (dynamic-link "libOpenCL.so.1"))
(define-syntax-rule (define-cl name ret (arg ...))
  (define name
    (pointer->procedure ret (dynamic-func (symbol->string 'name) libcl)
                        (list arg ...))))
(define-cl clGetPlatformIDs int32 (uint32 '* '*))
(define-cl clGetPlatformInfo int32 ('* uint32 size_t '* '*))
(define-cl clGetDeviceIDs int32 ('* uint64 uint32 '* '*))
(define-cl clCreateContext '* ('* uint32 '* '* '* '*))
(define-cl clCreateCommandQueue '* ('* '* uint64 '*))
(define-cl clCreateProgramWithSource '* ('* uint32 '* '* '*))
(define-cl clBuildProgram int32 ('* uint32 '* '* '* '*))
(define-cl clGetProgramBuildInfo int32 ('* '* uint32 size_t '* '*))
(define-cl clCreateKernel '* ('* '* '*))
(define-cl clCreateBuffer '* ('* uint64 size_t '* '*))
(define-cl clSetKernelArg int32 ('* uint32 size_t '*))
(define-cl clCreateUserEvent '* ('* '*))
(define-cl clSetUserEventStatus int32 ('* int32))
(define-cl clEnqueueNDRangeKernel int32 ('* '* uint32 '* '* '* uint32 '* '*))
(define-cl clEnqueueReadBuffer int32 ('* '* uint32 size_t size_t '* uint32 '* '*))
(define-cl clSetEventCallback int32 ('* int32 '* '*))
(define-cl clFlush int32 ('*))
(define-cl clWaitForEvents int32 (uint32 '*))
(define-cl clReleaseEvent int32 ('*))
(define-cl clReleaseKernel int32 ('*))
(define-cl clReleaseProgram int32 ('*))
(define-cl clReleaseMemObject int32 ('*))
(define-cl clReleaseCommandQueue int32 ('*))
(define-cl clReleaseContext int32 ('*))

(define CL_PLATFORM_NAME #x0902)
(define CL_DEVICE_TYPE_CPU 2)
(define CL_MEM_WRITE_ONLY 2)
(define CL_COMPLETE 0)

(define (ok! what err)
  (unless (zero? err)
    (fail! "~a: ~a" what err)))

;; A pointer out-parameter and an error-code out-parameter.
(define (slot) (make-bytevector 8 0))
(define (slot-ref bv) (make-pointer (bytevector-u64-native-ref bv 0)))
(define (slot-int bv) (bytevector-s32-native-ref bv 0))
(define (pointers . ps)
  (let ((bv (make-bytevector (* 8 (length ps)))))
    (let loop ((i 0) (ps ps))
      (unless (null? ps)
        (bytevector-u64-native-set! bv (* 8 i) (pointer-address (car ps)))
        (loop (+ i 1) (cdr ps))))
    bv))

(define (pocl-platform)
  (let ((ids (make-bytevector (* 8 16))) (n (make-bytevector 4)))
    (ok! "clGetPlatformIDs"
         (clGetPlatformIDs 16 (bytevector->pointer ids) (bytevector->pointer n)))
    (let loop ((i 0))
      (if (= i (bytevector-u32-native-ref n 0))
          (begin (display "no PoCL platform\n") (exit 77))
          (let ((p (make-pointer (bytevector-u64-native-ref ids (* 8 i))))
                (name (make-bytevector 128 0)))
            (clGetPlatformInfo p CL_PLATFORM_NAME 128 (bytevector->pointer name)
                               %null-pointer)
            (if (string-contains (utf8->string name) "Portable Computing Language")
                p
                (loop (+ i 1))))))))

(define kernel-source
  (if break-build?
      "__kernel void k(__global int *a) { a[get_global_id(0)] = ; }"
      "
__kernel void k(__global int *a) { a[get_global_id(0)] = 7; }
"))

;; The program's build log for its one device, as a string.
(define CL_PROGRAM_BUILD_LOG #x1183)
(define (build-log program)
  (let ((size (slot)))
    (clGetProgramBuildInfo program device CL_PROGRAM_BUILD_LOG 0 %null-pointer
                           (bytevector->pointer size))
    (let ((log (make-bytevector (max 1 (bytevector-u64-native-ref size 0)) 0)))
      (clGetProgramBuildInfo program device CL_PROGRAM_BUILD_LOG
                             (bytevector-length log) (bytevector->pointer log)
                             %null-pointer)
      (pointer->string (bytevector->pointer log)))))

;; The callback: where it ran, and that Scheme could allocate there.
(define main-thread (current-thread))
(define callback-runs (make-atomic-box 0))
(define callback-thread (make-atomic-box #f))
(define on-complete
  (procedure->pointer
   void
   (lambda (event status data)
     (atomic-box-set! callback-thread (current-thread))
     (let ((junk (make-list 1000 status)))
       (atomic-box-set! callback-runs (+ (atomic-box-ref callback-runs)
                                          (length junk)))))
   (list '* int32 '*)))

(define platform (pocl-platform))
(define device
  (let ((d (slot)))
    (ok! "clGetDeviceIDs"
         (clGetDeviceIDs platform CL_DEVICE_TYPE_CPU 1 (bytevector->pointer d)
                         %null-pointer))
    (slot-ref d)))
(define err (slot))
(define context
  (clCreateContext %null-pointer 1 (bytevector->pointer (pointers device))
                   %null-pointer %null-pointer (bytevector->pointer err)))
(ok! "clCreateContext" (slot-int err))
(define queue (clCreateCommandQueue context device 0 (bytevector->pointer err)))
(ok! "clCreateCommandQueue" (slot-int err))

(define collections-wanted 5)

;; The worker: build, enqueue behind the gate, and wait; returns its
;; suspensions and what the kernel wrote.
(define phase (make-atomic-box #f))
(define gate (clCreateUserEvent context (bytevector->pointer err)))
(ok! "clCreateUserEvent" (slot-int err))

(define (work)
  (gc-watch-current-thread!)
  (let* ((src (string->pointer kernel-source))
         (program (clCreateProgramWithSource
                   context 1 (bytevector->pointer (pointers src))
                   %null-pointer (bytevector->pointer err))))
    (ok! "clCreateProgramWithSource" (slot-int err))
    ;; Without the layer, no collection may come during the raw build: it
    ;; would stop this thread with bdwgc's signals, and PoCL's LLVM, whose
    ;; handlers it installed when the device was opened, takes the restart
    ;; signal (SIGXCPU) for a fatal one and deletes the build's temporary
    ;; files, failing the build ("unable to rename temporary"). With the
    ;; layer the build is in a safe region. What this run compares is the
    ;; wait.
    (unless with-layer? (gc-disable))
    (let ((err (clBuildProgram program 1 (bytevector->pointer (pointers device))
                               %null-pointer %null-pointer %null-pointer)))
      (unless with-layer? (gc-enable))
      (unless (zero? err)
        (fail! "clBuildProgram: ~a; the build log:\n~a" err
               (build-log program))))
    (let* ((kernel (clCreateKernel program (string->pointer "k")
                                   (bytevector->pointer err)))
           (buf (clCreateBuffer context CL_MEM_WRITE_ONLY 16 %null-pointer
                                (bytevector->pointer err)))
           (global (make-bytevector 8))
           (done (slot))
           (out (make-bytevector 16 0)))
      (ok! "clCreateBuffer" (slot-int err))
      (bytevector-u64-native-set! global 0 4)
      (ok! "clSetKernelArg"
           (clSetKernelArg kernel 0 8 (bytevector->pointer (pointers buf))))
      (ok! "clEnqueueNDRangeKernel"
           (clEnqueueNDRangeKernel queue kernel 1 %null-pointer
                                   (bytevector->pointer global) %null-pointer
                                   1 (bytevector->pointer (pointers gate))
                                   (bytevector->pointer done)))
      (when with-layer?
        (ok! "clSetEventCallback"
             (clSetEventCallback (slot-ref done) CL_COMPLETE on-complete
                                 %null-pointer)))
      (ok! "clFlush" (clFlush queue))
      (atomic-box-set! phase 'wait)
      (ok! "clWaitForEvents" (clWaitForEvents 1 (bytevector->pointer done)))
      (atomic-box-set! phase #f)
      (gc-unwatch!)
      (ok! "clEnqueueReadBuffer"
           (clEnqueueReadBuffer queue buf 1 0 16 (bytevector->pointer out) 0
                                %null-pointer %null-pointer))
      (clReleaseEvent (slot-ref done))
      (clReleaseMemObject buf)
      (clReleaseKernel kernel)
      (clReleaseProgram program)
      (list (gc-suspensions) (bytevector-s32-native-ref out 12)))))

(define worker (spawn work))
;; Collect while the worker is in clWaitForEvents: the gate holds its
;; kernel back until the collections are done, whatever the machine's
;; speed.
(define during (collect-while phase 'wait collections-wanted))
(ok! "clSetUserEventStatus" (clSetUserEventStatus gate CL_COMPLETE))
(define result (join-thread worker))
(clReleaseEvent gate)

(format #t "~a: ~a collections during the wait, ~a suspensions\n"
        (if with-layer? "with the layer" "without the layer")
        during (car result))
(check "the kernel ran" (= (cadr result) 7))
(check "collections completed during the wait" (= during collections-wanted))
(if with-layer?
    (begin
      (check "the OpenCL thread was never suspended" (= (car result) 0))
      ;; The callback comes after the wait returns: wait for it.
      (await "the Scheme callback"
             (lambda () (positive? (atomic-box-ref callback-runs))))
      (check "the Scheme callback ran once, in Guile"
             (= (atomic-box-ref callback-runs) 1000))
      (check "on a thread of PoCL's, not the program's"
             (let ((t (atomic-box-ref callback-thread)))
               (and t (not (memq t (list main-thread worker))))))
      ;; The same program without the layer, in a child.
      (let ((child (system* (or (getenv "GUILE") "guile") "--no-auto-compile"
                            (car (command-line)) "--without-layer")))
        (check "without the layer, the collections suspend the OpenCL thread"
               (eqv? (status:exit-val child) 0))))
    (check "without the layer, every collection suspended the OpenCL thread"
           (>= (car result) collections-wanted)))

(clReleaseCommandQueue queue)
(clReleaseContext context)
(test-exit)
