;;; Every procedure (clgc) exports has a docstring, which ,describe and
;;; procedure-documentation show, starting with how it is called.
(use-modules (clgc) (clgc-test) (system vm program))

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
;; And the converse: every procedure the extension defines (a primitive in
;; the module, from its area files' tables) is exported, or is one of the
;; Scheme half's '%' helpers.
(define exported (map car exports))
(module-for-each
 (lambda (name var)
   (let ((v (and (variable-bound? var) (variable-ref var))))
     (when (and (program? v) (primitive-code? (program-code v))
                (not (string-prefix? "%" (symbol->string name))))
       (check (format #f "~a, defined by the extension, is exported" name)
              (memq name exported)))))
 (resolve-module '(clgc)))
(test-exit)
