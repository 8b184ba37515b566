;;; The generic path: any OpenCL command by name through clgc's wrappers,
;;; arguments converted by the command's metadata; handles adopted back.
(use-modules (clgc) (clgc-test) (ice-9 exceptions) (rnrs bytevectors)
             (system foreign))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))

;; clGetPlatformIDs(0, NULL, &n)
(define count (make-bytevector 4 0))
(check "clGetPlatformIDs returns CL_SUCCESS"
       (= 0 (command-call "clGetPlatformIDs" 0 #f count)))
(check "at least as many platforms as (platforms)"
       (= (bytevector-u32-native-ref count 0) (length (platforms))))

;; clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, 4, &units, NULL)
(define units (make-bytevector 4 0))
(check "clGetDeviceInfo returns CL_SUCCESS"
       (= 0 (command-call "clGetDeviceInfo" device #x1002 4 units #f)))
(check "same compute units as device-info"
       (= (bytevector-u32-native-ref units 0)
          (device-info device 'max-compute-units)))

;; clCreateBuffer returns a handle: adopt it as a buffer object.
(define err (make-bytevector 4 1))
(define p (command-call "clCreateBuffer" context 1 64 #f err))
(check "clCreateBuffer's errcode" (= 0 (bytevector-s32-native-ref err 0)))
(check "a pointer came back" (and (pointer? p) (not (null-pointer? p))))
(define buf (pointer->object 'buffer p))
(check "adopted buffer's size" (= (buffer-size buf) 64))
(check "handle->pointer gives it back"
       (= (pointer-address (handle->pointer buf)) (pointer-address p)))
(check "clFinish through the generic path"
       (= 0 (command-call "clFinish" queue)))
(check "an OpenCL error is a return value on this path"
       (= -36 (command-call "clFinish" #f))) ; CL_INVALID_COMMAND_QUEUE
(release buf)
(check "released" (released? buf))

;; A closure: a Scheme procedure as a C callback of any signature.
(define destroyed '())
(define on-destroy
  (make-closure "v(pp)" (lambda (mem data)
                          (set! destroyed (cons (pointer-address data)
                                                destroyed)))))
(define buf2 (make-buffer context '(read-write) 64))
(check "clSetMemObjectDestructorCallback with a closure"
       (= 0 (command-call "clSetMemObjectDestructorCallback" buf2 on-destroy
                          (make-pointer 42))))
(release buf2)
(check "the closure ran when the buffer went, with its data"
       (equal? destroyed '(42)))

;; On PoCL's thread: an event callback given as a closure's code.
(use-modules (ice-9 threads))
(define lock (make-mutex))
(define cv (make-condition-variable))
(define where #f)
(define on-event
  (make-closure "v(pip)"
                (lambda (event status data)
                  (with-mutex lock
                    (set! where (current-thread))
                    (signal-condition-variable cv)))))
(define program (build-program (make-program context saxpy-source)))
(define kernel (make-kernel program "saxpy"))
(define b (make-buffer context '(read-write) 64))
(set-kernel-args! kernel '(1.0 . float) b b)
(define gate (make-user-event context))
(define ev (enqueue-kernel queue kernel 16 #f (list gate)))
(check "clSetEventCallback with a closure"
       (= 0 (command-call "clSetEventCallback" ev 0 on-event #f)))
(flush queue)
(set-user-event-status! gate 'complete)
(with-mutex lock
  (let loop () (unless where (wait-condition-variable cv lock) (loop))))
(check "the closure ran on another thread with Guile entered"
       (not (eq? where (current-thread))))
(wait-for-events (list ev))

;; A closure that raises: reported, raised at the next wait.
(define bad (make-closure "v(pp)" (lambda (mem data) (error "closure boom"))))
(define buf3 (make-buffer context '(read-write) 64))
(command-call "clSetMemObjectDestructorCallback" buf3 bad #f)
(release buf3)
(check-raises "a closure's exception is raised at the next wait"
              (lambda (e) (and (clgc-error? e)
                               (equal? (clgc-error-name e) "CLGC_ECALLBACK")))
              (lambda () (wait-for-events (list ev))))
(check-raises "a bad signature" (lambda (e) (and (clgc-error? e)
                                   (equal? (clgc-error-name e) "CLGC_ESIGNATURE")))
              (lambda () (make-closure "v(q)" (lambda () #t))))
(for-each release (list on-destroy on-event bad))
(define (released-closure-error? e)
  (and (clgc-error? e) (equal? (clgc-error-name e) "CLGC_EINVAL")
       (string-contains (exception-message e) "the closure was released")))
(let ((e (check-raises "a released closure: CLGC_EINVAL, saying so"
                       released-closure-error?
                       (lambda () (closure-pointer bad)))))
  (unless (released-closure-error? e)
    (format #t "got ~s\n" (and (clgc-error? e) (clgc-error-name e)))))
(check-raises "a released closure on the generic path: the same"
              released-closure-error?
              (lambda () (command-call "clSetMemObjectDestructorCallback"
                                       (make-buffer context '(read-write) 16)
                                       bad #f)))
;; Memory a command uses after the call (clgc_command_keep) is kept until
;; it completes: a non-blocking read into a bytevector nothing else
;; references, held back by a barrier on a user event, is not collected
;; before the read is done (a guardian would return it), and is once it is.
(define guard (make-guardian))
(define held (make-buffer context '(read-write) 64))
(define gate2 (make-user-event context))
(enqueue-barrier queue (list gate2))
(let ((bv (make-bytevector 64 0)))
  (guard bv)
  (check "a non-blocking read into a bytevector"
         (= 0 (command-call "clEnqueueReadBuffer" queue held 0 0 64 bv 0 #f
                            #f))))
(gc) (gc)
(check "its bytevector is kept while the read waits" (not (guard)))
(set-user-event-status! gate2 'complete)
(finish queue)
(wait-for-events (list (enqueue-marker queue)))
;; A hold is dropped by a callback (the command's completion, the
;; buffer's destructor) that the driver may make after the wait or the
;; release has returned: collected again until the guardian has the
;; bytevector (await's bound, not a time).
(define (collected guardian)
  (let ((got #f))
    (await "a collection to hand the bytevector to its guardian"
           (lambda () (gc) (set! got (guardian)) got))
    got))
(check "and let go once it is done" (bytevector? (collected guard)))
;; A buffer over a bytevector (CL_MEM_USE_HOST_PTR) keeps it.
(define guard2 (make-guardian))
(define over
  (let ((bv (make-bytevector 16 7)))
    (guard2 bv)
    (pointer->object 'buffer (command-call "clCreateBuffer" context 9 16 bv
                                           #f))))
(gc) (gc)
(check "a buffer's bytevector is kept while the buffer lives" (not (guard2)))
(check "and its bytes read through the buffer"
       (let ((back (make-bytevector 16 0)))
         (read-buffer! queue over back)
         (equal? back (make-bytevector 16 7))))
(release over)
(check "and let go once the buffer is gone" (bytevector? (collected guard2)))
(test-exit)
