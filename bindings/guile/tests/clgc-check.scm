;;; (clgc-check): checks that count failures, the exit status automake
;;; reads, and collections made while another thread is inside OpenCL.
;;; Apart from (clgc-test) because it needs nothing of (clgc): a test that
;;; must not load the module (layer.scm) uses it too.

(define-module (clgc-check)
  #:use-module (ice-9 atomic)
  #:use-module (ice-9 threads)
  #:export (check check-raises test-exit collect-while))

(define *failures* 0)

;; (check name expr): expr must be true.
(define-syntax-rule (check name expr)
  (if expr
      (format #t "ok: ~a\n" name)
      (begin
        (set! *failures* (+ *failures* 1))
        (format #t "FAIL: ~a\n" name))))

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
  (let wait-busy ()
    (unless (eq? (atomic-box-ref busy) phase)
      (yield)
      (wait-busy)))
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
