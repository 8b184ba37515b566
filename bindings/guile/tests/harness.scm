;;; The test helpers of (clgc-check) against what once hung a test: a
;;; check that fails on a worker thread, an exception that ends a worker,
;;; a wait for a thread that never comes, and layer.scm's worker whose
;;; build fails (the main thread waited for its phase for ever). Each runs
;;; in a child guile, which must end with a failure that says why, not
;;; hang and not pass.
(use-modules (clgc-check) (ice-9 popen) (ice-9 textual-ports))

(define guile (or (getenv "GUILE") "guile"))

;; (child args ...): run guile with args; its exit status and output
;; (stdout and stderr together).
(define (child . args)
  (let* ((port (apply open-pipe* OPEN_READ "sh" "-c" "exec \"$@\" 2>&1" "sh"
                      guile "--no-auto-compile" args))
         (out (get-string-all port))
         (status (close-pipe port)))
    (values (status:exit-val status) out)))

;; (fails name expect args ...): the child exits 1 and says expect.
(define (fails name expect . args)
  (call-with-values (lambda () (apply child args))
    (lambda (status out)
      (check (format #f "~a: exit 1 (got ~a), saying ~s~a" name status expect
                     (if (string-contains out expect) ""
                         (format #f "; it said:\n~a" out)))
             (and (eqv? status 1) (string-contains out expect))))))

(define prelude "(use-modules (clgc-check) (ice-9 threads))")

(fails "a check failing on a worker thread"
       "FAIL: on the worker (on a thread of the test's)"
       "-c" (string-append prelude "
(spawn (lambda () (check \"on the worker\" #f)))
(await \"nothing\" (lambda () #f))"))

(fails "an exception ending a worker thread"
       "uncaught on a thread of the test's"
       "-c" (string-append prelude "
(spawn (lambda () (error \"the worker's error\")))
(await \"nothing\" (lambda () #f))"))

(setenv "CLGC_TEST_WAIT_BOUND" "1")
(fails "a wait for a thread that never comes"
       "gave up after 1 s waiting for the other thread"
       "-c" (string-append prelude "
(await \"the other thread\" (lambda () #f))"))
(unsetenv "CLGC_TEST_WAIT_BOUND")

;; layer.scm's own run without the layer, its worker's build broken.
(fails "layer.scm, the worker's build failing"
       "FAIL: clBuildProgram: -11; the build log:"
       (string-append (getenv "CLGC_GUILE_SRCDIR") "/tests/layer.scm")
       "--without-layer" "--break-build")

(test-exit)
