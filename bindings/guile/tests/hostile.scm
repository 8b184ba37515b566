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
(check-raises "a raw pointer as a sampler (no object): CL_INVALID_VALUE"
              (lambda (e) (and (clgc-error? e)
                               (equal? (clgc-error-name e) "CL_INVALID_VALUE")))
              (lambda () (command-call "clRetainSampler"
                                       (make-pointer #x1234))))
(check "#f is still NULL: clFinish gives CL_INVALID_COMMAND_QUEUE"
       (= -36 (command-call "clFinish" #f)))
(check "the right kind still works" (= 0 (command-call "clFinish" queue)))

(release user-event)
(test-exit)
