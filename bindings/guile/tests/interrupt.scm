;;; Waits wake for Guile's asyncs (issue 24, item 7): a SIGINT handler runs
;;; during a long kernel, while its event is not complete, and the wait
;;; goes on; a handler that raises unwinds out of the wait while the
;;; kernel goes on, and the kernel's buffer is intact; cancel-thread ends
;;; a thread waiting for a gate; a bytevector a transfer still writes into
;;; survives the transfer's interrupted wait. The latency from delivery to
;;; the handler is printed, not asserted.
(use-modules (clgc) (clgc-test) (ice-9 exceptions) (ice-9 format)
             (ice-9 threads) (rnrs bytevectors))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))
(define kernel (make-kernel (build-program (make-program context slow-source))
                            "slow"))

;; What the slow kernel leaves in out[gid]: x = gid + 1 put through
;; x -> 1664525 x + 1013904223 (mod 2^32) n times, by composing the affine
;; map with itself (exponentiation by squaring).
(define (slow-value gid n)
  (define m (expt 2 32))
  (let loop ((n n) (a 1664525) (c 1013904223) (ra 1) (rc 0))
    (if (zero? n)
        (modulo (+ (* ra (+ gid 1)) rc) m)
        (let ((ra2 (if (odd? n) (modulo (* a ra) m) ra))
              (rc2 (if (odd? n) (modulo (+ (* a rc) c) m) rc)))
          (loop (quotient n 2) (modulo (* a a) m) (modulo (+ (* a c) c) m)
                ra2 rc2)))))

(define work-items 4)
(define iterations 500000000)
(define (run-slow)
  (let ((out (make-buffer context '(read-write) (* 4 work-items))))
    (set-kernel-args! kernel out `(,iterations . uint))
    (values out (enqueue-kernel queue kernel work-items))))
(define (intact? out)
  (let ((bv (make-bytevector (* 4 work-items) 0)))
    (read-buffer! queue out bv)
    (let loop ((i 0))
      (or (= i work-items)
          (let ((got (bytevector-u32-native-ref bv (* 4 i)))
                (want (slow-value i iterations)))
            (if (= got want)
                (loop (+ i 1))
                (begin (format #t "out[~a] = ~a, ~a expected\n" i got want)
                       #f)))))))

(define (ms t) (/ (* 1000.0 t) internal-time-units-per-second))

;; Send SIGINT from another thread once ev is running; returns the thread,
;; whose result is the delivery time.
(define (interrupt-when-running ev)
  (spawn (lambda ()
           (await "the kernel to start" (lambda () (eq? (event-status ev) 'running)))
           (usleep 200000)
           (let ((t (get-internal-real-time)))
             (kill (getpid) SIGINT)
             t))))

;; 1. A handler that returns: the wait runs it and goes on waiting.
(define handled #f) ; (time . status of the event then)
(call-with-values run-slow
  (lambda (out ev)
    (sigaction SIGINT (lambda (sig)
                        (set! handled (cons (get-internal-real-time)
                                            (event-status ev)))))
    (let ((sender (interrupt-when-running ev)))
      (wait-for-events (list ev))
      (let ((sent (join-thread sender)))
        (check "the SIGINT handler ran during the wait" (pair? handled))
        (when (pair? handled)
          (format #t "latency from delivery to the handler: ~,2f ms\n"
                  (ms (- (car handled) sent)))
          (check "it ran while the kernel's event was not complete"
                 (memq (cdr handled) '(running submitted queued))))
        (check "the wait went on until the kernel completed"
               (eq? (event-status ev) 'complete))
        (check "the kernel's buffer is intact" (intact? out))))
    (release out)))

;; 2. A handler that raises unwinds out of the wait; the kernel goes on.
(define-exception-type &interrupted &error make-interrupted interrupted?)
(call-with-values run-slow
  (lambda (out ev)
    (sigaction SIGINT (lambda (sig) (raise-exception (make-interrupted))))
    (let* ((sender (interrupt-when-running ev))
           (e (check-raises "a raising SIGINT handler unwinds out of the wait"
                            interrupted?
                            (lambda () (wait-for-events (list ev))))))
      (join-thread sender)
      (check "the wait returned while the kernel was still running"
             (not (eq? (event-status ev) 'complete)))
      (gc)
      (wait-for-events (list ev))
      (check "the kernel's buffer is intact after the interrupted wait"
             (intact? out)))
    (release out)))
(sigaction SIGINT SIG_DFL)

;; 3. cancel-thread ends a thread waiting for a gate that never opens.
(define gate (make-user-event context))
(define about-to-wait #f)
(define waiting (call-with-new-thread
                 (lambda ()
                   (set! about-to-wait #t)
                   (wait-for-events (list gate))
                   'returned)))
(await "the thread to start waiting" (lambda () about-to-wait))
(usleep 100000) ; into the wait (cancelled before it, it would end too)
(cancel-thread waiting 'cancelled)
(let ((r (join-thread waiting (+ (current-time) 60) 'timeout)))
  (check (format #f "cancel-thread ended the waiting thread (it gave ~a)" r)
         (eq? r 'cancelled)))

;; 4. A read gated on a user event, interrupted: the bytevector it will
;; write into is kept alive until the read completes.
(define gate2 (make-user-event context))
(define src (make-buffer context '(read-write) 4096))
(define guardian (make-guardian))
(define main (current-thread))
(let ((t (spawn (lambda ()
                  (usleep 100000)
                  (system-async-mark (lambda () (raise-exception
                                                 (make-interrupted)))
                                     main)))))
  (check-raises "an async raising in read-buffer!'s wait unwinds" interrupted?
                (lambda ()
                  (let ((bv (make-bytevector 4096 0)))
                    (guardian bv)
                    (read-buffer! queue src bv 0 (list gate2)))))
  (join-thread t))
(gc) (gc)
(check "the read's bytevector is not collected while the read is pending"
       (not (guardian)))
(set-user-event-status! gate2 'complete)
(finish queue)
(wait-for-events (list gate2)) ; the next wait unprotects completed orphans
(set-user-event-status! gate 'complete)
(for-each release (list gate gate2 src kernel queue context))
(test-exit)
