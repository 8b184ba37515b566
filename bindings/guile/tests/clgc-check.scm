;;; (clgc-check): checks that count failures, and the exit status automake
;;; reads. Apart from (clgc-test) because it needs nothing of (clgc): a test
;;; that must not load the module (layer.scm) uses it too.

(define-module (clgc-check)
  #:export (check check-raises test-exit))

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

