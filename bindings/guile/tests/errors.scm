;;; Bad input raises a clear exception and crashes nothing: wrong types,
;;; released objects, a build error (with its log), OpenCL's own errors.
(use-modules (clgc) (clgc-test) (rnrs bytevectors) (ice-9 exceptions))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))

;; A build error: the exception carries the name, code, procedure and log.
(define bad (make-program context "__kernel void f(__global int *x) { x[0] = y; }"))
(let ((e (check-raises "build error raises &clgc-error"
                       (cl-error? "CL_BUILD_PROGRAM_FAILURE")
                       (lambda () (build-program bad)))))
  (check "build error code" (and e (= (clgc-error-code e) -11)))
  (check "build error procedure"
         (and e (eq? (clgc-error-procedure e) 'build-program)))
  (check "build log names the undeclared identifier"
         (and e (string? (clgc-error-build-log e))
              (string-contains (clgc-error-build-log e) "undeclared identifier")))
  (check "build log through program-build-log"
         (string-contains (program-build-log bad device) "error")))

;; Wrong types are Guile's own wrong-type-arg errors.
(check-raises "context of a number" wrong-type? (lambda () (make-context 42)))
(check-raises "queue of a non-context" wrong-type?
              (lambda () (make-command-queue device device)))
(check-raises "program of a non-string" wrong-type?
              (lambda () (make-program context 'source)))
(check-raises "kernel argument of a string" wrong-type?
              (lambda () (set-kernel-arg! (make-kernel
                                           (build-program
                                            (make-program context saxpy-source))
                                           "saxpy")
                                          0 "two")))
(check-raises "read into a list" wrong-type?
              (lambda () (read-buffer! queue (make-buffer context '() 16) '(1 2))))
(check-raises "callback not a procedure" wrong-type?
              (lambda () (set-event-callback! (make-user-event context) 42)))
(check-raises "release of a non-object" wrong-type? (lambda () (release "x")))
(check-raises "unknown info key" error? (lambda () (device-info device 'colour)))
(check-raises "unknown buffer flag" error?
              (lambda () (make-buffer context '(sideways) 16)))

;; OpenCL's errors.
(define program (build-program (make-program context saxpy-source)))
(check-raises "unknown kernel name" (cl-error? "CL_INVALID_KERNEL_NAME")
              (lambda () (make-kernel program "nope")))
(define kernel (make-kernel program "saxpy"))
(check-raises "argument index out of range" (cl-error? "CL_INVALID_ARG_INDEX")
              (lambda () (set-kernel-arg! kernel 7 1.0 'float)))
(check-raises "launch with arguments unset" (cl-error? "CL_INVALID_KERNEL_ARGS")
              (lambda () (enqueue-kernel queue kernel 16)))
(define buf (make-buffer context '(read-write) 16))
(check-raises "read past the end" (cl-error? "CL_INVALID_VALUE")
              (lambda () (read-buffer! queue buf (make-bytevector 64))))
(check-raises "wait for nothing" (cl-error? "CL_INVALID_VALUE")
              (lambda () (wait-for-events '())))

;; Released objects: a clear error naming the kind's invalid code.
(release buf)
(release buf) ; idempotent
(check "released? after release" (released? buf))
(check-raises "read from a released buffer" (cl-error? "CL_INVALID_MEM_OBJECT")
              (lambda () (read-buffer! queue buf (make-bytevector 16))))
(release kernel)
(check-raises "argument of a released kernel" (cl-error? "CL_INVALID_KERNEL")
              (lambda () (set-kernel-arg! kernel 0 1.0 'float)))
(define ev (make-user-event context))
(release ev)
(check-raises "wait on a released event" (cl-error? "CL_INVALID_EVENT")
              (lambda () (wait-for-events (list ev))))

;; The generic path's own errors.
(check-raises "no such command" (cl-error? "CLGC_ENOCOMMAND")
              (lambda () (command-call "clFrobnicate")))
(check-raises "wrong arity" (cl-error? "CLGC_EARITY")
              (lambda () (command-call "clFinish")))
(check-raises "wrong argument type" wrong-type?
              (lambda () (command-call "clFinish" 3.5)))

;; A failed command's status is raised by the wait.
(define gate (make-user-event context))
(set-user-event-status! gate -5)
(check-raises "failed user event raises at the wait"
              (cl-error? "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST")
              (lambda () (wait-for-events (list gate))))
;; Type predicates: each true of its kind only.
(let* ((device (pocl-device))
       (ctx (make-context (list device)))
       (q (make-command-queue ctx device))
       (prog (build-program (make-program ctx saxpy-source)))
       (objs (list (car (platforms)) device ctx q prog (make-kernel prog "saxpy")
                   (make-buffer ctx '(read-write) 16) (make-user-event ctx)
                   (make-completion-queue)
                   (make-closure "v()" (lambda () #t))))
       (preds (list cl-platform? cl-device? cl-context? cl-command-queue?
                    cl-program? cl-kernel? cl-mem? cl-event? completion-queue?
                    closure?)))
  (for-each
   (lambda (pred i)
     (check (format #f "~a is true of its kind only"
                    (procedure-name pred))
            (equal? (map (lambda (o) (pred o)) (cons 42 objs))
                    (cons #f (map (lambda (j) (= i j)) (iota (length objs)))))))
   preds (iota (length preds)))
  (for-each release (reverse objs)))

;; Printers say what an object is.
(let* ((name (device-info device 'name))
       (printed (format #f "~s" device))
       (prefix (format #f "#<cl-device ~s " name)))
  (check (format #f "a device prints with its name (~a)" printed)
         (string-prefix? prefix printed)))
(let* ((k (make-kernel (build-program (make-program context saxpy-source))
                       "saxpy"))
       (printed (format #f "~a" k)))
  (check (format #f "a kernel displays with its function's name (~a)" printed)
         (string-prefix? "#<cl-kernel \"saxpy\" " printed))
  (release k)
  (check "a released object prints as released"
         (equal? (format #f "~s" k) "#<cl-kernel released>")))
(check "a context prints with its kind and handle"
       (string-prefix? "#<cl-context " (format #f "~s" context)))

(test-exit)
