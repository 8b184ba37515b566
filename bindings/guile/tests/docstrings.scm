;;; Every procedure (clgc) exports has a docstring, which ,describe and
;;; procedure-documentation show, starting with how it is called.
(use-modules (clgc) (clgc-test))

(define exports
  (module-map (lambda (name var) (cons name (variable-ref var)))
              (resolve-interface '(clgc))))
(define procs (filter (lambda (p) (procedure? (cdr p))) exports))
(check (format #f "(clgc) exports procedures (~a)" (length procs))
       (> (length procs) 40))
(for-each
 (lambda (p)
   (let ((doc (procedure-documentation (cdr p))))
     (check (format #f "~a has a docstring~a" (car p)
                    (if (string? doc) "" " (none)"))
            (and (string? doc) (> (string-length doc) 10)))))
 procs)
(test-exit)
