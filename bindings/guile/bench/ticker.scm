;;; Other work while a kernel runs: a select loop over a completion
;;; queue's port (the pattern of docs/guile.md, "Keeping other work
;;; running"), ticking every 10 ms while a kernel of about 400 ms runs.
;;; Each run prints the ticks during the kernel against the ideal (the
;;; kernel's time over the period); the last line is their median.
;;;   guile ticker.scm [runs]      (with (clgc) on the load path)
(use-modules (clgc) (ice-9 format))

(define period 0.01)
(define runs (if (> (length (command-line)) 1)
                 (string->number (cadr (command-line)))
                 11))

(define (now)
  (exact->inexact (/ (get-internal-real-time) internal-time-units-per-second)))

(define-values (device platform)
  (find-device 'cpu "Portable Computing Language"))
(unless device
  (display "no PoCL CPU device\n")
  (exit 77))
(define context (make-context (list device)))
(define queue (make-command-queue context device))
(define spin
  (make-kernel
   (build-program
    (make-program context "
__kernel void spin(__global uint *out, uint n)
{ uint x = get_global_id(0) + 1;
  for (uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u;
  out[get_global_id(0)] = x; }"))
   "spin"))
(define out (make-buffer context '(read-write) (* 4 256)))

;; The trip count that makes the kernel last about 400 ms here.
(define trips
  (let loop ((n 100000))
    (set-kernel-args! spin out (cons n 'uint))
    (let ((t0 (now)))
      (wait-for-events (list (enqueue-kernel queue spin 256)))
      (let ((dt (- (now) t0)))
        (if (< dt 0.1)
            (loop (* n 4))
            (inexact->exact (round (* n (/ 0.4 dt)))))))))
(set-kernel-args! spin out (cons trips 'uint))

;; The pattern: the kernel's completion goes to a completion queue; the
;; loop selects on the queue's port with a timeout until its next tick,
;; drains when the port is readable, and does its own work otherwise.
(define cq (make-completion-queue))
(define port (completion-queue-port cq))

(define (run-once)
  (let* ((t0 (now))
         (done #f)
         (ticks 0)
         (ev (enqueue-kernel queue spin 256)))
    (set-event-callback! ev (lambda (event status) (set! done (now))) cq)
    (flush queue)
    (let loop ((next (+ t0 period)))
      (unless done
        (let* ((left (max 0 (- next (now))))
               (ready (select (list port) '() '()
                              0 (inexact->exact (round (* left 1e6))))))
          (when (pair? (car ready))
            (drain! cq))
          ;; A tick, then the next a period after this one was due, or
          ;; now if that has passed too: a loop held up loses the ticks it
          ;; missed (no catching up), and a late wakeup does not push
          ;; every later tick back.
          (if (>= (now) next)
              (begin
                (set! ticks (+ ticks 1)) ; the loop's own work
                (loop (max (+ next period) (now))))
              (loop next)))))
    (release ev)
    (let ((ideal (floor (/ (- done t0) period))))
      (/ ticks (max ideal 1)))))

(define (median l)
  (let ((s (sort l <))) (list-ref s (quotient (length s) 2))))

(define ratios
  (map (lambda (i)
         (let ((r (run-once)))
           (format #t "run ~a: ~,3f of the ideal ticks\n" (+ i 1) r)
           r))
       (iota runs)))
(format #t "select loop over the completion port: median ~,3f of the ideal ticks (~a runs)\n"
        (median ratios) runs)
