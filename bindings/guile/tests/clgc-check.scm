;;; (clgc-check): checks that count failures, the exit status automake
;;; reads, and collections made while another thread is inside OpenCL.
;;; Apart from (clgc-test) because it needs nothing of (clgc): a test that
;;; must not load the module (layer.scm) uses it too.

(define-module (clgc-check)
  #:use-module (ice-9 atomic)
  #:use-module (ice-9 threads)
  #:export (check check-raises test-exit fail! spawn await collect-while))

(define *failures* 0)

;; The thread that loaded this module, the script's own.
(define main-thread (current-thread))

;; (fail! fmt arg ...): print the failure and end the test at once, from
;; any thread. A thread that merely ended (as `exit` or an uncaught
;; exception ends a thread other than the main one) could leave the main
;; thread waiting for it.
(define (fail! fmt . args)
  (format #t "FAIL: ~a\n" (apply format #f fmt args))
  (force-output (current-output-port))
  (force-output (current-error-port))
  (primitive-exit 1))

;; (check name expr): expr must be true. A failing check on the main
;; thread is counted and the script goes on; on any other thread it ends
;; the test at once (fail!).
(define-syntax-rule (check name expr)
  (if expr
      (format #t "ok: ~a\n" name)
      (if (eq? (current-thread) main-thread)
          (begin
            (set! *failures* (+ *failures* 1))
            (format #t "FAIL: ~a\n" name))
          (fail! "~a (on a thread of the test's)" name))))

;; (spawn thunk): call-with-new-thread, but an exception that thunk does
;; not handle ends the test at once, printed, instead of ending only the
;; thread.
(define (spawn thunk)
  (call-with-new-thread
   (lambda ()
     (with-exception-handler
      (lambda (e) (fail! "uncaught on a thread of the test's: ~s" e))
      thunk
      #:unwind? #t))))

;; (await what ready?): wait for another thread's progress, until
;; (ready?) holds. The bound is no timing assertion: far above what any
;; wait takes, it turns a wait that would never end into a failure that
;; says what was awaited. CLGC_TEST_WAIT_BOUND: the bound in seconds
;; (default 120).
(define await-bound
  (or (and=> (getenv "CLGC_TEST_WAIT_BOUND") string->number) 120))
(define (await what ready?)
  (let ((deadline (+ (current-time) await-bound)))
    (let loop ()
      (unless (ready?)
        (when (> (current-time) deadline)
          (fail! "gave up after ~a s waiting for ~a" await-bound what))
        (usleep 1000)
        (loop)))))

;; (check-raises name pred thunk): thunk must raise an exception that
;; satisfies pred. Returns the exception (or #f).
(define (check-raises name pred thunk)
  (let ((exn (with-exception-handler
              (lambda (e) e)
              (lambda () (thunk) #f)
              #:unwind? #t)))
    (check name (and exn (pred exn)))
    exn))

(define (test-exit)
  (format #t "~a failure(s)\n" *failures*)
  (exit (if (zero? *failures*) 0 1)))

(define (gc-count) (assq-ref (gc-stats) 'gc-times))

;; (collect-while busy phase n): once the atomic box busy holds phase (the
;; worker is inside OpenCL), allocate and collect on this thread n times;
;; returns how many of the collections started and ended with busy still
;; holding phase. Each round allocates so that the collector has garbage to
;; reclaim.
(define (collect-while busy phase n)
  (await (format #f "the worker to reach its phase ~s" phase)
         (lambda () (eq? (atomic-box-ref busy) phase)))
  ;; Let the worker get from setting its flag into the OpenCL call: a
  ;; collection in that sliver would find it in Guile mode.
  (usleep 20000)
  (let loop ((i 0) (during 0))
    (if (= i n)
        during
        (let ((junk (map (lambda (k) (make-vector 64 k)) (iota 5000)))
              (before (gc-count)))
          (gc)
          (loop (+ i 1)
                (if (and (eq? (atomic-box-ref busy) phase)
                         (> (gc-count) before)
                         (pair? junk))
                    (+ during 1)
                    during))))))
