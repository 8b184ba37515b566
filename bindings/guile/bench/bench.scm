;;; The binding's cost (docs/performance.md), in one process so that the
;;; runtime, queue and kernel are the same:
;;; 1. launch + wait of a small kernel from Scheme (enqueue-kernel,
;;;    wait-for-events, release) against the same loop in C through clgc
;;;    (c-launch-wait, from the tests' helper extension), interleaved in
;;;    rounds, medians reported;
;;; 2. collection latency on this thread while another Guile thread builds
;;;    a large program, with the safe regions on (clgc) and off (what raw
;;;    (system foreign) calls give).
;;; Run it like a test (bindings/guile/tests/run-guile.sh sets the paths):
;;;   run-guile.sh bindings/guile/bench/bench.scm
(use-modules (clgc) (clgc-test) (ice-9 threads) (ice-9 atomic)
             (ice-9 format) (srfi srfi-1))

(load-extension (getenv "CLGC_GUILE_GCWATCH") "scm_init_clgc_gcwatch")

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))
(define program (build-program (make-program context saxpy-source)))
(define kernel (make-kernel program "saxpy"))
(define size 1024)
(define bx (make-buffer context '(read-write) (* 4 size)))
(define by (make-buffer context '(read-write) (* 4 size)))
(set-kernel-args! kernel '(2.0 . float) bx by)

(define (median l)
  (let ((s (sort l <))) (list-ref s (quotient (length s) 2))))

(define per-round 200)
(define (scheme-round)
  (let ((t0 (get-internal-real-time)))
    (do ((i 0 (+ i 1))) ((= i per-round))
      (let ((ev (enqueue-kernel queue kernel size)))
        (wait-for-events (list ev))
        (release ev)))
    (/ (* 1e9 (/ (- (get-internal-real-time) t0)
                 internal-time-units-per-second))
       per-round)))
(define (c-round)
  (/ (c-launch-wait (handle->pointer queue) (handle->pointer kernel) size
                    per-round)
     1.0 per-round))

(scheme-round) (c-round) ; warm up
(define rounds
  (map (lambda (i) (cons (scheme-round) (c-round))) (iota 15)))
(define s (median (map car rounds)))
(define c (median (map cdr rounds)))
(format #t "launch + wait of saxpy(~a), median of 15 rounds of ~a:\n" size per-round)
(format #t "  Scheme ~,1f us, C through clgc ~,1f us, ratio ~,2f\n"
        (/ s 1000) (/ c 1000) (/ s c))

;; 2. Collection latency while another thread builds.
(define (gc-latencies regions?)
  (set-safe-regions! regions?)
  (let* ((busy (make-atomic-box #t))
         (prog (make-program context (big-source 150)))
         (t (call-with-new-thread
             (lambda ()
               (with-exception-handler (lambda (e) #f)
                 (lambda () (build-program prog))
                 #:unwind? #t)
               (atomic-box-set! busy #f)))))
    (let loop ((acc '()))
      (if (atomic-box-ref busy)
          (let* ((junk (map (lambda (k) (make-vector 64 k)) (iota 5000)))
                 (t0 (get-internal-real-time)))
            (gc)
            (loop (if (pair? junk)
                      (cons (/ (- (get-internal-real-time) t0) 1e6) acc)
                      acc)))
          (begin
            (join-thread t)
            (set-safe-regions! #t)
            acc)))))
(for-each
 (lambda (regions? label)
   (let ((l (gc-latencies regions?)))
     (format #t "collection latency during a build, ~a: ~a collections, median ~,2f ms, max ~,2f ms\n"
             label (length l) (if (null? l) 0 (median l))
             (if (null? l) 0 (apply max l)))))
 '(#t #f) '("clgc (regions on)" "raw (regions off)"))
