;;; While one Guile thread builds a large program and then waits for a
;;; long kernel, another allocates and collects: the collections complete
;;; during the build and the wait, and bdwgc never suspends the OpenCL
;;; thread (it is inside scm_without_guile). With the safe regions
;;; switched off (set-safe-regions! #f, or CLGC_GUILE_REGIONS=off) the same
;;; collections suspend it. Counts, never durations: bdwgc's own thread
;;; events (tests/gcevents.c, through the gcwatch helper extension).
(use-modules (clgc) (clgc-test) (ice-9 threads) (ice-9 atomic))

(load-extension (getenv "CLGC_GUILE_GCWATCH") "scm_init_clgc_gcwatch")

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))
(define collections-wanted 5)

;; The kernel the waits run, built beforehand: with the regions off the
;; scenario's own build may fail (see below).
(define slow-program (build-program (make-program context slow-source)))

;; One run of the scenario; returns (build-collections build-suspensions
;; wait-collections wait-suspensions build-outcome). build-outcome is ok,
;; or the error's name: with the regions off, bdwgc suspends and restarts
;; the building thread with SIGPWR and SIGXCPU, and the LLVM inside PoCL
;; takes SIGXCPU for a fatal signal and deletes its temporary files, which
;; fails the build (docs/guile.md).
(define (scenario)
  (let* ((busy (make-atomic-box #f))
         (program (make-program context (big-source 150)))
         (out (make-buffer context '(read-write) 16))
         (gate (make-user-event context))
         (stats (make-atomic-box #f))
         (worker
          (spawn
           (lambda ()
             (gc-watch-current-thread!)
             (atomic-box-set! busy 'build)
             (let ((outcome
                    (with-exception-handler
                     (lambda (e) (if (clgc-error? e) (clgc-error-name e) 'other))
                     (lambda () (build-program program) 'ok)
                     #:unwind? #t)))
             (atomic-box-set! busy #f)
             (gc-unwatch!)
             (let ((build-susp (gc-suspensions))
                   (kernel (make-kernel slow-program "slow")))
               (set-kernel-args! kernel out '(70000000 . uint))
               ;; The kernel waits for the gate, which the collecting
               ;; thread opens only after its collections: they happen
               ;; during this thread's wait, whatever the machine's speed.
               (let ((ev (enqueue-kernel queue kernel 2 #f (list gate))))
                 (flush queue)
                 (gc-watch-current-thread!)
                 (atomic-box-set! busy 'wait)
                 (wait-for-events (list ev))
                 (atomic-box-set! busy #f)
                 (gc-unwatch!)
                 (atomic-box-set! stats (list build-susp (gc-suspensions)
                                              outcome)))))))))
    (let* ((build-gcs (collect-while busy 'build collections-wanted))
           (wait-gcs (collect-while busy 'wait collections-wanted)))
      (set-user-event-status! gate 'complete)
      (join-thread worker)
      (let ((s (atomic-box-ref stats)))
        (list build-gcs (car s) wait-gcs (cadr s) (caddr s))))))

(check "safe regions are on by default" (safe-regions?))
(let ((r (scenario)))
  (format #t "regions on: ~a collections during the build, ~a suspensions; ~a during the wait, ~a suspensions; build ~a\n"
          (list-ref r 0) (list-ref r 1) (list-ref r 2) (list-ref r 3)
          (list-ref r 4))
  (check "the build succeeded" (eq? (list-ref r 4) 'ok))
  (check "collections completed during the build" (> (list-ref r 0) 0))
  (check "the building thread was never suspended" (= (list-ref r 1) 0))
  (check "collections completed during the wait" (> (list-ref r 2) 0))
  (check "the waiting thread was never suspended" (= (list-ref r 3) 0)))

(set-safe-regions! #f)
(let ((r (scenario)))
  (format #t "regions off: ~a collections during the build, ~a suspensions; ~a during the wait, ~a suspensions; build ~a\n"
          (list-ref r 0) (list-ref r 1) (list-ref r 2) (list-ref r 3)
          (list-ref r 4))
  ;; The build may fail at the first collection (the SIGXCPU above),
  ;; before this thread has collected at all: only the gated wait is sure
  ;; to see collections.
  (check "regions off: the building thread was suspended by every collection during the build"
         (>= (list-ref r 1) (list-ref r 0)))
  (check "regions off: collections during the wait" (> (list-ref r 2) 0))
  (check "regions off: the waiting thread was suspended by them"
         (>= (list-ref r 3) (list-ref r 2))))
(set-safe-regions! #t)
(test-exit)
