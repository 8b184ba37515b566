;;; The (clgc) example: a saxpy, then what a Guile program gets from the
;;; safe regions, side by side with them switched off (which is what raw
;;; calls through (system foreign) give). Thread A builds a program and
;;; waits for a long kernel while this thread allocates and collects.
;;;
;;;   guile demo.scm           (with (clgc) on the load path)
;;;
;;; Exits non-zero if the regions did not keep A out of the collections.
;;; Run by `make check`, which also loads the tests' gcwatch extension so
;;; that the table shows how often bdwgc suspended A.
(use-modules (clgc) (rnrs bytevectors) (ice-9 threads) (ice-9 atomic)
             (ice-9 format))

(define gcwatch? (and (getenv "CLGC_GUILE_GCWATCH")
                      (begin (load-extension (getenv "CLGC_GUILE_GCWATCH")
                                             "scm_init_clgc_gcwatch")
                             #t)))
(define (watch!) (when gcwatch? ((module-ref (current-module)
                                             'gc-watch-current-thread!))))
(define (unwatch!)
  (if gcwatch?
      (begin ((module-ref (current-module) 'gc-unwatch!))
             ((module-ref (current-module) 'gc-suspensions)))
      "-"))

(define-values (device platform)
  (find-device 'cpu "Portable Computing Language"))
(unless device
  (display "no PoCL CPU device\n")
  (exit 77))
(define context (make-context (list device)))
(define queue (make-command-queue context device))

;; 1. saxpy: y = 2x + y
(define n 4096)
(define x (make-bytevector (* 4 n)))
(define y (make-bytevector (* 4 n)))
(do ((i 0 (+ i 1))) ((= i n))
  (bytevector-ieee-single-native-set! x (* 4 i) (exact->inexact i))
  (bytevector-ieee-single-native-set! y (* 4 i) 1.0))
(define program
  (build-program
   (make-program context "
__kernel void saxpy(float a, __global const float *x, __global float *y)
{ size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }
__kernel void slow(__global uint *out, uint n)
{ uint x = get_global_id(0) + 1;
  for (uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u;
  out[get_global_id(0)] = x; }")))
(define saxpy (make-kernel program "saxpy"))
(define bx (make-buffer context '(read-only) x))
(define by (make-buffer context '(read-write) y))
(set-kernel-args! saxpy '(2.0 . float) bx by)
(wait-for-events (list (enqueue-kernel queue saxpy n)))
(read-buffer! queue by y)
(define saxpy-ok
  (let loop ((i 0))
    (or (= i n)
        (and (= (bytevector-ieee-single-native-ref y (* 4 i)) (+ (* 2.0 i) 1.0))
             (loop (+ i 1))))))
(format #t "saxpy of ~a floats on ~a: ~a\n" n (device-info device 'name)
        (if saxpy-ok "correct" "WRONG"))

;; 2. The table.
(define (big-source)
  (string-append
   ""
   (apply string-append
          (map (lambda (i)
                 (format #f "float f~a(float x) { float s = 0; for (int k = 0; k < ~a; k++) s += sin(x * k) * cos(x + ~a.0f); return s; }\n"
                         i (+ i 3) i))
               (iota 150)))
   "__kernel void big(__global float *o) { float s = 0;\n"
   (apply string-append
          (map (lambda (i) (format #f " s += f~a(o[~a]);\n" i i)) (iota 150)))
   ;; A constant of its own in the code (a comment would not do: PoCL
   ;; caches by the preprocessed source), so that no run finds it built.
   (format #f " o[0] = s + ~a.0f; }\n"
           (random 1000000000 (random-state-from-platform)))))

(define (now) (get-internal-real-time))
(define (ms t) (/ t (/ internal-time-units-per-second 1000.0)))
(define (gc-count) (assq-ref (gc-stats) 'gc-times))

;; Collect `rounds` times while A is in `phase`; returns (collections
;; longest-ms).
(define (collect-while busy phase rounds)
  (let wait () (unless (eq? (atomic-box-ref busy) phase) (yield) (wait)))
  (usleep 20000)
  (let loop ((i 0) (during 0) (longest 0))
    (if (= i rounds)
        (list during (ms longest))
        (let* ((junk (map (lambda (k) (make-vector 64 k)) (iota 5000)))
               (before (gc-count))
               (t0 (now)))
          (gc)
          (let ((t (- (now) t0)))
            (loop (+ i 1)
                  (if (and (eq? (atomic-box-ref busy) phase)
                           (> (gc-count) before) (pair? junk))
                      (+ during 1)
                      during)
                  (max longest t)))))))

(define slow (make-kernel program "slow"))
(define out (make-buffer context '(read-write) 16))
(set-kernel-args! slow out '(70000000 . uint))

(define (scenario regions?)
  (set-safe-regions! regions?)
  (let* ((busy (make-atomic-box #f))
         (big (make-program context (big-source)))
         (gate (make-user-event context))
         (result (make-atomic-box #f))
         (a (call-with-new-thread
             (lambda ()
               (watch!)
               (atomic-box-set! busy 'build)
               (let ((outcome (with-exception-handler
                               (lambda (e) (if (clgc-error? e)
                                               (clgc-error-name e)
                                               "error"))
                               (lambda () (build-program big) "ok")
                               #:unwind? #t)))
                 (atomic-box-set! busy #f)
                 (let ((build-susp (unwatch!))
                       (ev (enqueue-kernel queue slow 1 #f (list gate))))
                   (flush queue)
                   (watch!)
                   (atomic-box-set! busy 'wait)
                   (wait-for-events (list ev))
                   (atomic-box-set! busy #f)
                   (atomic-box-set! result
                                    (list outcome build-susp (unwatch!)))))))))
    (let* ((b (collect-while busy 'build 10))
           (w (collect-while busy 'wait 10)))
      (set-user-event-status! gate 'complete)
      (join-thread a)
      (let ((r (atomic-box-ref result)))
        (set-safe-regions! #t)
        (list (car r) (car b) (cadr r) (cadr b) (car w) (caddr r) (cadr w))))))

(define (show v)
  (if (and (real? v) (inexact? v)) (format #f "~,1f" v) v))
(define on (scenario #t))
(define off (scenario #f))
(format #t "\n~40a ~20a ~20a\n" "" "clgc (regions on)" "raw (regions off)")
(for-each
 (lambda (label i)
   (format #t "~40a ~20a ~20a\n" label
           (show (list-ref on i)) (show (list-ref off i))))
 '("build of a 150-function program" "collections during the build"
   "A suspended by them" "longest collection (ms)"
   "collections during the kernel's wait" "A suspended by them"
   "longest collection (ms)")
 (iota 7))
(exit (if (and saxpy-ok (equal? (car on) "ok")
               (> (list-ref on 1) 0) (> (list-ref on 4) 0)
               (or (not gcwatch?)
                   (and (eqv? (list-ref on 2) 0) (eqv? (list-ref on 5) 0)
                        (> (list-ref off 5) 0))))
          0 1))
