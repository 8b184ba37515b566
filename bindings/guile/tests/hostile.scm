;;; Scheme code that crashed guile before must raise Scheme errors: the
;;; generic path's kind and size checks, adopting handles, closures C
;;; still holds, out-of-range sizes (issue 24, items 1 to 5).
(use-modules (clgc) (clgc-test) (ice-9 exceptions) (rnrs bytevectors)
             (system foreign))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))

;; (wrong-type? e): a wrong-type-arg error (Guile's own).
(define (wrong-type? e)
  (and (error? e) (not (clgc-error? e))
       (eq? (exception-kind e) 'wrong-type-arg)))

;;; 1. command-call checks kinds against the command's metadata and
;;; refuses raw pointers where an object is expected.
(check-raises "clFinish with a context: wrong-type-arg" wrong-type?
              (lambda () (command-call "clFinish" context)))
(define user-event (make-user-event context))
(check-raises "clFinish with an event: wrong-type-arg" wrong-type?
              (lambda () (command-call "clFinish" user-event)))
(check-raises "clFinish with a raw pointer: wrong-type-arg" wrong-type?
              (lambda () (command-call "clFinish" (make-pointer #x1234))))
(check-raises "clReleaseMemObject with a raw pointer: wrong-type-arg"
              wrong-type?
              (lambda () (command-call "clReleaseMemObject"
                                       (make-pointer #x1234))))
(check-raises "a raw pointer as a callback: wrong-type-arg" wrong-type?
              (lambda () (command-call "clSetEventCallback" user-event 0
                                       (make-pointer #x1234) #f)))
(check-raises "an object where an array is expected: wrong-type-arg"
              wrong-type?
              (lambda () (command-call "clWaitForEvents" 1 user-event)))
(check-raises "a raw pointer as a sampler: wrong-type-arg" wrong-type?
              (lambda () (command-call "clRetainSampler"
                                       (make-pointer #x1234))))
(check-raises "a raw pointer as a semaphore (no object): CL_INVALID_VALUE"
              (lambda (e) (and (clgc-error? e)
                               (equal? (clgc-error-name e) "CL_INVALID_VALUE")))
              (lambda () (command-call "clRetainSemaphoreKHR"
                                       (make-pointer #x1234))))
(check "#f is still NULL: clFinish gives CL_INVALID_COMMAND_QUEUE"
       (= -36 (command-call "clFinish" #f)))
(check "the right kind still works" (= 0 (command-call "clFinish" queue)))

;;; 2. Every bytevector given for a pointer is checked against the size
;;; the command's other arguments say it reaches.
(define (misc-error? e)
  (and (error? e) (not (clgc-error? e))))
(define small (make-bytevector 4 0))
(check-raises "clGetDeviceInfo of 256 bytes into 4: an error" misc-error?
              (lambda () (command-call "clGetDeviceInfo" device #x102B 256
                                       small #f)))
(check "the bytevector was not written" (equal? small #vu8(0 0 0 0)))
(check-raises "a 2-byte bytevector for a cl_uint result: an error" misc-error?
              (lambda () (command-call "clGetPlatformIDs" 0 #f
                                       (make-bytevector 2 0))))
(check-raises "clWaitForEvents of 4 events from 8 bytes: an error" misc-error?
              (lambda () (command-call "clWaitForEvents" 4
                                       (make-bytevector 8 0))))
(check-raises "a const char * with no NUL: an error" misc-error?
              (lambda () (command-call "clCreateKernel" #f
                                       (string->utf8 "saxpy") #f)))
(let ((bv (make-bytevector 4 0)))
  (check "exactly the size still works"
         (and (= 0 (command-call "clGetDeviceInfo" device #x1002 4 bv #f))
              (= (bytevector-u32-native-ref bv 0)
                 (device-info device 'max-compute-units)))))

;;; 3. Adopting a handle checks that it is an object of that kind.
(define (invalid? name)
  (lambda (e) (and (clgc-error? e) (equal? (clgc-error-name e) name))))
(check-raises "pointer->object of #x1234: CL_INVALID_MEM_OBJECT"
              (invalid? "CL_INVALID_MEM_OBJECT")
              (lambda () (pointer->object 'buffer (make-pointer #x1234))))
(check-raises "pointer->object of a bytevector's memory: CL_INVALID_EVENT"
              (invalid? "CL_INVALID_EVENT")
              (lambda () (pointer->object 'event
                                          (bytevector->pointer
                                           (make-bytevector 64 7)))))
(check-raises "pointer->object of the null pointer: CL_INVALID_CONTEXT"
              (invalid? "CL_INVALID_CONTEXT")
              (lambda () (pointer->object 'context %null-pointer)))
(check-raises "a queue adopted as a buffer: CL_INVALID_MEM_OBJECT"
              (invalid? "CL_INVALID_MEM_OBJECT")
              (lambda () (pointer->object 'buffer (handle->pointer queue))))
(check-raises "a context adopted as a platform: CL_INVALID_PLATFORM"
              (invalid? "CL_INVALID_PLATFORM")
              (lambda () (pointer->object 'platform (handle->pointer context))))
(let* ((err (make-bytevector 4 1))
       (p (command-call "clCreateBuffer" context 1 64 #f err))
       (b (pointer->object 'buffer p)))
  (check "a real buffer is adopted" (= 64 (buffer-size b)))
  (release b))
;; An event from a generic enqueue's out-parameter is adopted as one.
(let* ((evp (make-bytevector (sizeof '*) 0))
       (bv (make-bytevector 16 0))
       (b (make-buffer context '(read-write) 16)))
  (check "clEnqueueWriteBuffer through the generic path"
         (= 0 (command-call "clEnqueueWriteBuffer" queue b 1 0 16 bv 0 #f evp)))
  (let ((ev (pointer->object 'event
                             (dereference-pointer
                              (bytevector->pointer evp)))))
    (check "the adopted event is complete" (eq? 'complete (event-status ev)))
    (release ev))
  (release b))
(gc) (gc)

;;; 4. Releasing a closure that C still holds: C's later calls return a
;;; zero result instead of jumping into freed code.
(define destructor-ran #f)
(define on-destroy (make-closure "v(pp)" (lambda (mem data)
                                           (set! destructor-ran #t))))
(define held (make-buffer context '(read-write) 64))
(check "a destructor callback set with a closure"
       (= 0 (command-call "clSetMemObjectDestructorCallback" held on-destroy
                          #f)))
(release on-destroy)
(release held) ; PoCL calls the released closure's code here
(check "the released closure's procedure did not run" (not destructor-ran))
(define add1 (make-closure "i(i)" (lambda (x) (+ x 1))))
(define add1-code (pointer->procedure int (closure-pointer add1) (list int)))
(check "a closure called from C" (= 42 (add1-code 41)))
(release add1)
(gc)
(check "a released closure called from C returns 0" (= 0 (add1-code 41)))

;;; 5. Out-of-range sizes and integers raise out-of-range errors that
;;; Guile can print (Guile 3.0.8's own size_t range error crashed the
;;; printer).
(define (printable-out-of-range? e)
  (and (error? e) (eq? (exception-kind e) 'out-of-range)
       (string? (call-with-output-string
                 (lambda (port) (write (exception-args e) port)
                         (print-exception port #f (exception-kind e)
                                          (exception-args e)))))))
(define kernel (make-kernel (build-program (make-program context saxpy-source))
                            "saxpy"))
(define cq (make-completion-queue))
(for-each
 (lambda (name thunk)
   (check-raises name printable-out-of-range? thunk))
 '("make-buffer of size -1" "make-buffer of size 2^64"
   "enqueue-kernel of global size -1" "set-kernel-arg! index -1"
   "set-kernel-arg! int 2^31" "set-user-event-status! 2^40"
   "drain! of -1" "command-call size_t -1" "command-call cl_uint 2^32"
   "kernel-arg-info index -1")
 (list (lambda () (make-buffer context '(read-write) -1))
       (lambda () (make-buffer context '(read-write) (expt 2 64)))
       (lambda () (enqueue-kernel queue kernel -1))
       (lambda () (set-kernel-arg! kernel -1 0 'int))
       (lambda () (set-kernel-arg! kernel 0 (expt 2 31) 'int))
       (lambda () (set-user-event-status! user-event (expt 2 40)))
       (lambda () (drain! cq -1))
       (lambda () (command-call "clGetDeviceInfo" device #x1002 -1 #f #f))
       (lambda () (command-call "clGetDeviceInfo" device (expt 2 32) 4 #f #f))
       (lambda () (kernel-arg-info kernel -1 'name))))

(release cq)
(release user-event)
(test-exit)
