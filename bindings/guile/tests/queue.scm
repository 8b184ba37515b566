;;; The completion queue's fd as a port: revealed count set (Guile never
;;; closes clgc's fd), readable when a completion is pending, drained by
;;; drain!, and left alone when the port is collected.
(use-modules (clgc) (clgc-test) (ice-9 threads))

(define device (pocl-device))
(define context (make-context (list device)))
(define cq (make-completion-queue))
(define port (completion-queue-port cq))

(check "same port each time" (eq? port (completion-queue-port cq)))
(check "revealed count set" (= (port-revealed port) 1))
(define (readable?)
  (not (null? (car (select (list port) '() '() 0)))))
(check "nothing pending: not readable" (not (readable?)))
(check "empty drain" (= (drain! cq) 0))

(define ran '())
(define events (map (lambda (i) (make-user-event context)) (iota 3)))
(for-each (lambda (ev i)
            (set-event-callback! ev (lambda (e s) (set! ran (cons i ran))) cq))
          events (iota 3))
(for-each (lambda (ev) (set-user-event-status! ev 'complete)) events)
(check "readable with completions pending" (readable?))
(check "nothing ran before the drain" (null? ran))
(check "drain of at most 2 ran 2" (= (drain! cq 2) 2))
(check "still readable" (readable?))
(check "drain ran the third" (= (drain! cq) 1))
(check "in completion order" (equal? (reverse ran) '(0 1 2)))
(check "drained: not readable" (not (readable?)))

;; A port dropped and collected must not close the queue's fd.
(let ((fd (port->fdes port)))
  (release-port-handle port)
  (set! port #f)
  (hash-clear! (@@ (clgc) %ports))
  (gc) (gc)
  (let ((again (completion-queue-port cq)))
    (check "fd still open after the port was collected"
           (and (= (port->fdes again) fd) (begin (release-port-handle again) #t)))))
(define late (make-user-event context))
(set-event-callback! late (lambda (e s) #t) cq)
(check-raises "close with a callback still to come: CLGC_EBUSY"
              (lambda (e) (and (clgc-error? e)
                               (equal? (clgc-error-name e) "CLGC_EBUSY")))
              (lambda () (release cq)))
(check "queue still open" (not (released? cq)))
(set-user-event-status! late 'complete)
(check "drain the late one" (= (drain! cq) 1))
(release cq)
(check "queue closed" (released? cq))
(check-raises "drain of a closed queue"
              (lambda (e) (and (clgc-error? e)
                               (equal? (clgc-error-name e) "CLGC_EINVAL")))
              (lambda () (drain! cq)))
(test-exit)
