;;; A hostile sweep: every exported procedure called with arguments drawn
;;; from a pool of wrong, out-of-range, released and foreign values (a
;;; fixed pseudo-random sample of combinations for each arity it takes)
;;; returns or raises a Scheme exception: none crashes guile. command-call
;;; is swept with its pointer arguments drawn without raw pointers (it
;;; passes those to C as they are, by design).
(use-modules (clgc) (clgc-test) (system foreign) (rnrs bytevectors)
             (srfi srfi-1))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))
(define program (build-program (make-program context saxpy-source)))
(define kernel (make-kernel program "saxpy"))
(define buffer (make-buffer context '(read-write) 4096)) ; saxpy of up to 42 items
(set-kernel-args! kernel '(1.0 . float) buffer buffer)
(define done-event (enqueue-kernel queue kernel 1))
(wait-for-events (list done-event))
(define released-buffer (make-buffer context '(read-write) 16))
(release released-buffer)
(define cq (make-completion-queue))
(define closure (make-closure "v(p)" (lambda (p) #t)))

(define (pool)
  (list 0 1 -1 42 (expt 2 64) (- (expt 2 63)) 2.5 +nan.0 "" "saxpy"
        "clFinish" 'cpu 'read-write 'name 'float 'local '(read-write) '()
        '(1 2 3 4) (list device) (list done-event) #f #t
        (make-bytevector 0) (make-bytevector 8 0) (make-pointer #x1234)
        %null-pointer (car (platforms)) device context queue program kernel
        buffer done-event released-buffer cq closure (lambda args #f)))
(define (no-pointers l) (remove pointer? l))

(define state (seed->random-state 24))
(define (pick l) (list-ref l (random (length l) state)))

(define skip '(set-safe-regions! wait-for-events finish))
(define calls 0)
(define raised 0)
(define (try proc args)
  (set! calls (+ calls 1))
  (with-exception-handler
   (lambda (e) (set! raised (+ raised 1)) #f)
   (lambda () (apply proc args) #t)
   #:unwind? #t))

(module-for-each
 (lambda (name var)
   (let ((proc (variable-ref var)))
     (when (and (procedure? proc) (not (memq name skip)))
       (let* ((arity (procedure-minimum-arity proc))
              (req (car arity))
              (max-n (if (caddr arity) (+ req (cadr arity) 2)
                         (+ req (cadr arity))))
              (values-of (if (eq? name 'command-call)
                             (lambda () (no-pointers (pool)))
                             pool)))
         (do ((n req (+ n 1))) ((> n max-n))
           (do ((k 0 (+ k 1))) ((= k 150))
             (try proc (map (lambda (i) (pick (values-of))) (iota n)))))))))
 (resolve-interface '(clgc)))

;; The waits, on what never blocks: completed events and a drained queue.
(for-each (lambda (args) (try wait-for-events args))
          (list '() (list '()) (list (list done-event)) (list done-event)
                (list (list released-buffer)) (list 42) (list (list 42))))
(for-each (lambda (v) (try finish (list v))) (no-pointers (pool)))

(format #t "~a calls, ~a raised\n" calls raised)
(check "the sweep ran to the end without crashing guile" (> calls 1000))
(check "most calls raised (the pool is hostile)" (> raised (quotient calls 2)))
(gc)
(check "a fresh context still works afterwards"
       (let* ((device (pocl-device))
              (c (make-context (list device)))
              (q (make-command-queue c device))
              (b (make-buffer c '(read-write) 16)))
         (write-buffer! q b (make-bytevector 16 7))
         (equal? (read-buffer! q b (make-bytevector 16 0))
                 (make-bytevector 16 7))))
(test-exit)
