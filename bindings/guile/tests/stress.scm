;;; 10,000 Scheme event callbacks from PoCL's threads while another Guile
;;; thread allocates and collects: every one runs once, what each
;;; allocates survives, and the one that raises is reported once.
(use-modules (clgc) (clgc-test) (ice-9 threads) (ice-9 atomic)
             (ice-9 exceptions))

(define count 10000)
(define failing 5000)
(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))
(define kernel (make-kernel (build-program (make-program context saxpy-source))
                            "saxpy"))
(define bx (make-buffer context '(read-write) 64))
(define by (make-buffer context '(read-write) 64))
(set-kernel-args! kernel '(1.0 . float) bx by)

(define results (make-vector count #f))
(define lock (make-mutex))
(define all-done (make-condition-variable))
(define calls 0)
(define main-thread (current-thread))
(define foreign-calls (make-atomic-box 0))

(define gate (make-user-event context))
(define events
  (map (lambda (i)
         (let ((ev (enqueue-kernel queue kernel 16 #f (list gate))))
           (set-event-callback!
            ev
            (lambda (event status)
              (unless (eq? (current-thread) main-thread)
                (atomic-box-set! foreign-calls
                                 (+ 1 (atomic-box-ref foreign-calls))))
              (vector-set! results i (list i (make-string 8 #\x) (iota 4)))
              (with-mutex lock
                (set! calls (+ calls 1))
                (when (= calls count)
                  (signal-condition-variable all-done)))
              (when (= i failing)
                (raise-exception
                 (make-exception-with-message "callback 5000 failed")))))
           ev))
       (iota count)))
(flush queue)

(define stop (make-atomic-box #f))
(define collections (make-atomic-box 0))
(define collector
  (spawn
   (lambda ()
     (let loop ()
       (unless (atomic-box-ref stop)
         (let ((junk (map (lambda (k) (make-vector 32 k)) (iota 2000))))
           (gc)
           (atomic-box-set! collections (+ 1 (atomic-box-ref collections)))
           (when (pair? junk) (loop))))))))

(set-user-event-status! gate 'complete)
(finish queue)
(with-mutex lock
  (let loop ((seconds 0))
    (when (< calls count)
      (when (> seconds 120)
        (fail! "gave up after 120 s waiting for the callbacks: ~a of ~a ran"
               calls count))
      (wait-condition-variable all-done lock (+ (current-time) 1))
      (loop (+ seconds 1)))))
(atomic-box-set! stop #t)
(join-thread collector)
(gc) (gc)

(check "every callback ran once" (= calls count))
(check "they ran on PoCL's threads" (> (atomic-box-ref foreign-calls) 0))
(check "collections ran meanwhile" (> (atomic-box-ref collections) 0))
(check "what every callback allocated survived"
       (let loop ((i 0))
         (or (= i count)
             (and (equal? (vector-ref results i)
                          (list i (make-string 8 #\x) (iota 4)))
                  (loop (+ i 1))))))
(define raised
  (let loop ((tries 0) (n 0))
    (if (= tries 100)
        n
        (loop (+ tries 1)
              (+ n (with-exception-handler
                    (lambda (e)
                      (if (and (clgc-error? e)
                               (equal? (clgc-error-name e) "CLGC_ECALLBACK")
                               (equal? (exception-message (clgc-error-cause e))
                                       "callback 5000 failed"))
                          1
                          100))
                    (lambda () (wait-for-events (list (car events))) 0)
                    #:unwind? #t))))))
(check "the failing callback was reported exactly once" (= raised 1))
(for-each release events)
(test-exit)
