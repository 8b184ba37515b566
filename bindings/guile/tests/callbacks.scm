;;; Scheme callbacks: an event callback runs once on PoCL's thread with
;;; Guile entered, allocates, and what it allocates survives collections;
;;; an exception in one is reported through clgc_callback_fail and raised
;;; at the next wait; a deferred one runs in a drain on the draining
;;; thread; a build notification runs once.
(use-modules (clgc) (clgc-test) (rnrs bytevectors) (ice-9 threads)
             (ice-9 exceptions))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))
(define program (build-program (make-program context saxpy-source)))
(define kernel (make-kernel program "saxpy"))
(define n 256)
(define bx (make-buffer context '(read-write) (* 4 n)))
(define by (make-buffer context '(read-write) (* 4 n)))
(set-kernel-args! kernel '(1.0 . float) bx by)

(define lock (make-mutex))
(define done (make-condition-variable))
(define calls 0)
(define seen-thread #f)
(define seen-status #f)
(define kept #f)

;; Wait (no deadline: the event is forced) until calls reaches k.
(define (await-calls k)
  (with-mutex lock
    (let loop ()
      (when (< calls k)
        (wait-condition-variable done lock)
        (loop)))))

;; A kernel gated on a user event, so that it completes on PoCL's thread
;; after the callback is registered.
(define (gated-launch)
  (let* ((gate (make-user-event context))
         (ev (enqueue-kernel queue kernel n #f (list gate))))
    (flush queue)
    (values gate ev)))

(call-with-values gated-launch
  (lambda (gate ev)
    (set-event-callback!
     ev
     (lambda (event status)
       ;; Allocates on PoCL's thread: a list and a string that only this
       ;; global will refer to.
       (let ((data (list (iota 1000) (make-string 100 #\g) event)))
         (with-mutex lock
           (set! seen-thread (current-thread))
           (set! seen-status status)
           (set! kept data)
           (set! calls (+ calls 1))
           (signal-condition-variable done)))))
    (set-user-event-status! gate 'complete)
    (wait-for-events (list ev))
    (await-calls 1)
    (check "callback ran once" (= calls 1))
    (check "callback ran on another thread (PoCL's)"
           (and seen-thread (not (eq? seen-thread (current-thread)))))
    (check (format #f "callback status is complete, as event-status says (got ~s)"
                seen-status)
           (eq? seen-status 'complete))
    (check "callback got its event" (eq? (caddr kept) ev))
    (gc) (gc) (gc)
    (let ((junk (map (lambda (i) (make-vector 100 i)) (iota 2000))))
      (gc)
      (check "junk allocated" (= (length junk) 2000)))
    (check "what the callback allocated survived collections"
           (and (equal? (car kept) (iota 1000))
                (equal? (cadr kept) (make-string 100 #\g))))
    (check "still once" (= calls 1))))

;; An exception in a callback: reported, raised at the next wait, never
;; unwound into PoCL.
(call-with-values gated-launch
  (lambda (gate ev)
    (set-event-callback!
     ev
     (lambda (event status)
       (with-mutex lock
         (set! calls (+ calls 1))
         (signal-condition-variable done))
       (raise-exception (make-exception-with-message "boom in callback"))))
    (set-user-event-status! gate 'complete)
    (await-calls 2)
    ;; The failure was recorded before await-calls returned only if the
    ;; callback has finished raising: wait for its event and for the
    ;; callback's return through another (already complete) wait, giving
    ;; the callback's thread the CPU between waits (under valgrind, which
    ;; runs one thread at a time, 1000 waits that never yield could all
    ;; run before it finished: seen in CI).
    (let ((e (with-exception-handler
              (lambda (e) e)
              (lambda ()
                (let loop ((i 0))
                  (wait-for-events (list ev))
                  (yield)
                  (if (< i 1000) (loop (+ i 1)) #f)))
              #:unwind? #t)))
      (check "the wait raised the callback's failure"
             (and e (clgc-error? e)
                  (equal? (clgc-error-name e) "CLGC_ECALLBACK")))
      (check "the failure names the command"
             (and e (clgc-error? e)
                  (eq? (clgc-error-procedure e) 'clSetEventCallback)))
      (check "the cause is the Scheme exception"
             (and e (clgc-error? e)
                  (exception-with-message? (clgc-error-cause e))
                  (equal? (exception-message (clgc-error-cause e))
                          "boom in callback"))))
    (check "raised once: the next wait is clean"
           (with-exception-handler (lambda (e) #f)
             (lambda () (wait-for-events (list ev)) #t)
             #:unwind? #t))))

;; Deferred to a completion queue: runs in drain!, on this thread.
(define cq (make-completion-queue))
(call-with-values gated-launch
  (lambda (gate ev)
    (define where #f)
    (set-event-callback! ev (lambda (event status) (set! where (current-thread)))
                         cq)
    (set-user-event-status! gate 'complete)
    (wait-for-events (list ev))
    (let loop ((ran 0))
      (if (zero? ran)
          (begin
            (select (list (completion-queue-port cq)) '() '())
            (loop (drain! cq)))
          (check "deferred callback ran in the drain" (= ran 1))))
    (check "deferred callback ran on the draining thread"
           (eq? where (current-thread)))))
(release cq)

;; A build notification.
(define notified 0)
(build-program (make-program context saxpy-source) ""
               (lambda (p) (set! notified (+ notified 1))))
(check "build notification ran once" (= notified 1))
;; A build notification that raises: build-program raises it, and the next
;; transfer is clean.
(let ((e (with-exception-handler (lambda (x) x)
           (lambda ()
             (build-program (make-program context saxpy-source) ""
                            (lambda (p) (error "notify boom")))
             #f)
           #:unwind? #t)))
  (check "build-program raises its notification's exception"
         (and (clgc-error? e) (equal? (clgc-error-name e) "CLGC_ECALLBACK")
              (eq? (clgc-error-procedure e) 'clBuildProgram)
              (error? (clgc-error-cause e))))
  (check "the next transfer does not raise it again"
         (with-exception-handler (lambda (x) #f)
           (lambda ()
             (let ((b (make-buffer context '(read-write) 16)))
               (write-buffer! queue b (make-bytevector 16 0))
               (release b)
               #t))
           #:unwind? #t)))
;; An exception raised with error (a &message &irritants compound, which
;; Guile's C catch turns into misc-error's key and arguments) reaches the
;; program as that exception object.
(let* ((ev (make-user-event context))
       (e #f))
  (set-event-callback! ev (lambda (event status)
                            (error "callback error" 42)))
  (set-user-event-status! ev 'complete) ; PoCL calls back on this thread
  (set! e (with-exception-handler (lambda (x) x)
            (lambda () (wait-for-events (list ev)) #f)
            #:unwind? #t))
  (check "an error in a callback is raised as CLGC_ECALLBACK"
         (and (clgc-error? e) (equal? (clgc-error-name e) "CLGC_ECALLBACK")))
  (let ((cause (and (clgc-error? e) (clgc-error-cause e))))
    (check (format #f "its cause is the exception object (got ~s)" cause)
           (and (exception? cause) (error? cause)
                (eq? (exception-kind cause) 'misc-error)
                (equal? (exception-irritants cause) '("callback error" 42)))))
  (release ev))

;; The very object a callback raised is the cause.
(let* ((ev (make-user-event context))
       (raised (make-exception (make-external-error)
                               (make-exception-with-message "mine")))
       (e #f))
  (set-event-callback! ev (lambda (event status) (raise-exception raised)))
  (set-user-event-status! ev 'complete)
  (set! e (with-exception-handler (lambda (x) x)
            (lambda () (wait-for-events (list ev)) #f)
            #:unwind? #t))
  (check "the cause is the object the callback raised"
         (and (clgc-error? e) (eq? (clgc-error-cause e) raised)))
  (release ev))

(test-exit)
