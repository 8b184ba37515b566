;;; (clgc-test): what the binding's test scripts share: PoCL's CPU device
;;; (picked by platform name: the tests' vendors include clgc's stub
;;; vendor), and the checks of (clgc-check).

(define-module (clgc-test)
  #:use-module (clgc)
  #:use-module (clgc-check)
  #:use-module (rnrs bytevectors)
  #:use-module (ice-9 exceptions)
  #:re-export (check check-raises test-exit fail! spawn await collect-while)
  #:export (pocl-device pocl-context floats->bytevector bytevector->floats
            saxpy-source slow-source cl-error? wrong-type?))

(define (pocl-device)
  (call-with-values (lambda () (find-device 'cpu "Portable Computing Language"))
    (lambda (device platform)
      (unless device
        (display "no PoCL CPU device\n")
        (exit 77))
      device)))

(define (floats->bytevector lst)
  (let ((bv (make-bytevector (* 4 (length lst)))))
    (let loop ((i 0) (l lst))
      (unless (null? l)
        (bytevector-ieee-single-native-set! bv (* 4 i) (car l))
        (loop (+ i 1) (cdr l))))
    bv))

(define (cl-error? name)
  "A predicate of exceptions: clgc's error named NAME (a string)."
  (lambda (e) (and (clgc-error? e) (equal? (clgc-error-name e) name))))

(define (wrong-type? e)
  "Whether E is Guile's wrong-type-arg error."
  (and (error? e) (eq? (exception-kind e) 'wrong-type-arg)))

(define (bytevector->floats bv)
  (let loop ((i (- (quotient (bytevector-length bv) 4) 1)) (acc '()))
    (if (< i 0)
        acc
        (loop (- i 1)
              (cons (bytevector-ieee-single-native-ref bv (* 4 i)) acc)))))

(define saxpy-source "
__kernel void saxpy(float a, __global const float *x, __global float *y)
{
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}")

;; A kernel that spins for about `n` iterations per work-item, as
;; tests/slow.c's does: how long is the device's business, the tests only
;; count what happens meanwhile.
(define slow-source "
__kernel void slow(__global uint *out, uint n)
{
    uint x = get_global_id(0) + 1;
    for (uint i = 0; i < n; i++)
        x = x * 1664525u + 1013904223u;
    out[get_global_id(0)] = x;
}")

;; A program that takes PoCL a while to build (its front end and LLVM),
;; made unique so that PoCL's cache never has it: nfun functions and the
;; slow kernel.
(define-public (big-source nfun)
  (string-append
   ""
   (apply string-append
          (map (lambda (i)
                 (format #f "float f~a(float x) { float s = 0; for (int k = 0; k < ~a; k++) s += sin(x * k) * cos(x + ~a.0f); return s; }\n"
                         i (+ i 3) i))
               (iota nfun)))
   "__kernel void big(__global float *o) { float s = 0;\n"
   (apply string-append
          (map (lambda (i) (format #f " s += f~a(o[~a]);\n" i i)) (iota nfun)))
   ;; A constant of its own in the code (a comment would not do: PoCL
   ;; caches by the preprocessed source), so that no run finds it built.
   (format #f " o[0] = s + ~a.0f; }\n"
           (random 1000000000 (random-state-from-platform)))
   slow-source))
