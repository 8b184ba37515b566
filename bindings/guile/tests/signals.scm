;;; The program's signal handlers survive the LLVM inside PoCL (issue 24,
;;; item 6). LLVM installs its handlers (SIGXCPU among them, bdwgc's
;;; restart signal under Guile) when the device is first opened; when one
;;; of them runs it puts back the dispositions it found, so the first
;;; collection that restarts a thread through it resets a SIGINT handler
;;; the program set since. The binding puts the handlers back after every
;;; call that may load LLVM, device discovery first.
(use-modules (clgc) (clgc-test) (ice-9 threads))

(define got '())
(define (note! sig) (set! got (cons sig got)))

;; Deliver sig to this process and wait until its Scheme handler ran: a
;; disposition reset to the default would end the process instead.
(define (delivered? sig name)
  (set! got '())
  (kill (getpid) sig)
  (await (format #f "the ~a handler" name) (lambda () (memq name got)))
  #t)

;; n collections while another thread runs in Guile mode, so that bdwgc
;; stops and restarts it each time (restarting it with SIGXCPU).
(define (collect-with-spinner n)
  (let* ((stop #f)
         (spinner (spawn (lambda () (let loop () (unless stop (loop)))))))
    (let loop ((i 0)) (when (< i n) (gc) (loop (+ i 1))))
    (set! stop #t)
    (join-thread spinner)))

(define device (pocl-device))            ; opens the device: LLVM's handlers
(sigaction SIGINT (lambda (sig) (note! 'int)))
(sigaction SIGTERM (lambda (sig) (note! 'term)))
(collect-with-spinner 20)
(check "SIGINT's handler, set after device discovery, survives 20 collections"
       (delivered? SIGINT 'int))
(check "SIGTERM's too" (delivered? SIGTERM 'term))

(define context (make-context (list device)))
(define queue (make-command-queue context device))
(define program (build-program (make-program context (big-source 8))))
(define kernel (make-kernel program "slow"))
(define out (make-buffer context '(read-write) 64))
(set-kernel-args! kernel out '(1000 . uint))
(wait-for-events (list (enqueue-kernel queue kernel 16)))
(sigaction SIGINT (lambda (sig) (note! 'int2)))
(collect-with-spinner 20)
(check "a handler set after a build and a launch survives 20 collections"
       (delivered? SIGINT 'int2))
(check "SIGTERM's still runs" (delivered? SIGTERM 'term))
(for-each release (list out kernel program queue context))
(test-exit)
