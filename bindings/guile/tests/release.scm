;;; Release and finalizers: an explicit release drops OpenCL's reference
;;; once (twice is harmless, and the finalizer after it does nothing);
;;; objects dropped without release are released by their finalizers,
;;; which Guile runs on its finalization thread. Observed through the
;;; context's reference count, which each buffer holds one of.
(use-modules (clgc) (clgc-test) (rnrs bytevectors))

(define device (pocl-device))
(define context (make-context (list device)))

(define (context-refs)
  (let ((bv (make-bytevector 4 0)))
    ;; CL_CONTEXT_REFERENCE_COUNT
    (command-call "clGetContextInfo" context #x1080 4 bv #f)
    (bytevector-u32-native-ref bv 0)))

(define base (context-refs))
(define (make-buffers n)
  (map (lambda (i) (make-buffer context '(read-write) 64)) (iota n)))

(let ((bufs (make-buffers 50)))
  (check "50 buffers hold 50 references" (= (context-refs) (+ base 50)))
  (for-each release bufs)
  (for-each release bufs)
  (check "released explicitly, twice: back to the base" (= (context-refs) base)))
(gc) (gc)

;; Dropped without release: the finalizers release them. They run on
;; Guile's finalization thread after a collection; collect until they have
;; (a bounded number of rounds, not a time).
;; Made one at a time and kept in no list: a stale pointer the
;; conservative scan finds keeps one buffer, not a chain of them.
(define (drop-some)
  (do ((i 0 (+ i 1))) ((= i 200) #t)
    (make-buffer context '(read-write) 64)))
(drop-some)
(check "200 more references" (>= (context-refs) (+ base 1)))
(let loop ((round 0))
  (gc)
  (when (and (< round 200) (> (context-refs) (+ base 10)))
    (usleep 10000)
    (loop (+ round 1))))
(format #t "references left after the collections: ~a (base ~a)\n"
        (context-refs) base)
(check "finalizers released the dropped buffers (all but a few the conservative scan may keep)"
       (<= (context-refs) (+ base 10)))
(check "and nothing twice: the explicit ones did not come back"
       (>= (context-refs) base))
(test-exit)
