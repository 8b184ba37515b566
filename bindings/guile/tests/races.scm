;;; Objects released on one thread while another is in a call on them
;;; (issue 45): each procedure holds its objects until it ends
;;; (clgc/binding.h's boxes), so a call answers or finds the object
;;; released, and OpenCL never sees a freed handle. Not in the valgrind
;;; stage: Guile itself leaves 32 bytes of an exited thread's behind there,
;;; now and then (a definite leak whose every frame is libguile's).
(use-modules (clgc) (clgc-test) (rnrs bytevectors) (ice-9 exceptions)
             (ice-9 atomic) (ice-9 threads))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))
(define program (build-program (make-program context saxpy-source)))

(define (x-buffer)
  (make-buffer context '(read-only) (floats->bytevector '(1.0 2.0 3.0 4.0))))
(define (y-buffer)
  (make-buffer context '(read-write)
               (floats->bytevector '(10.0 10.0 10.0 10.0))))

;; Released on one thread while four others ask its size in a loop (was
;; SIGSEGV 3 of 3: a call handed OpenCL the freed handle). Each call holds
;; the buffer until it ends (clgc/binding.h's boxes): it answers 256, or
;; finds the buffer released and raises CL_INVALID_MEM_OBJECT; the
;; OpenCL release waits for the last call that held it.
(let* ((buf (make-buffer context '(read-write) 256))
       (answers (make-atomic-box 0))
       (size-or-released
        (lambda ()
          (with-exception-handler
           (lambda (e)
             (unless ((cl-error? "CL_INVALID_MEM_OBJECT") e)
               (raise-exception e))
             #f)
           (lambda () (buffer-size buf))
           #:unwind? #t)))
       (workers
        (map (lambda (i)
               (spawn (lambda ()
                        (let loop ()
                          (let ((size (size-or-released)))
                            (when size
                              (unless (= size 256)
                                (fail! "buffer-size answered ~a" size))
                              (atomic-box-set! answers
                                               (+ 1 (atomic-box-ref answers)))
                              (loop)))))))
             (iota 4))))
  (await "the workers' first answers"
         (lambda () (> (atomic-box-ref answers) 100)))
  (release buf)
  (for-each join-thread workers)
  (check "a release racing four threads' calls: each answered or saw it released"
         (released? buf)))

;; An event released while another thread waits for it (as OCaml's
;; hostile.ml races it): the wait holds the event, so it ends right (the
;; release waited for it) or, if the release came first, raises
;; CL_INVALID_EVENT; never a freed handle in OpenCL. 20 rounds.
(let ((kernel (make-kernel program "saxpy"))
      (ended (make-atomic-box 0)))
  (set-kernel-args! kernel '(2.0 . float) (x-buffer) (y-buffer))
  (do ((i 0 (+ i 1))) ((= i 20))
    (let* ((gate (make-user-event context))
           (ev (enqueue-kernel queue kernel 4 #f (list gate)))
           (started (make-atomic-box #f))
           (waiter
            (spawn (lambda ()
                     (atomic-box-set! started #t)
                     (with-exception-handler
                      (lambda (e)
                        (unless ((cl-error? "CL_INVALID_EVENT") e)
                          (raise-exception e)))
                      (lambda () (wait-for-events (list ev)))
                      #:unwind? #t)
                     (atomic-box-set! ended (+ 1 (atomic-box-ref ended)))))))
      (flush queue)
      (await "the waiter to start" (lambda () (atomic-box-ref started)))
      (release ev)
      (set-user-event-status! gate 'complete)
      (join-thread waiter)
      (release gate)))
  (finish queue)
  (check "every waiter of a released event ended" (= (atomic-box-ref ended) 20)))

(test-exit)
