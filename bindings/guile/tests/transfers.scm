;;; Transfers and the commands around them: non-blocking reads and writes
;;; (their bytevectors kept alive until the command completes, whatever
;;; the program drops), fills, copies, sub-buffers, markers and barriers
;;; with wait lists. Commands are held back behind a user event, so what
;;; the test sees while they are pending does not depend on timing.
(use-modules (clgc) (clgc-test) (rnrs bytevectors) (srfi srfi-1))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))

(define (iota-bytevector n start)
  (u8-list->bytevector (map (lambda (i) (modulo (+ start i) 256)) (iota n))))
(define (slice bv start len)
  (let ((out (make-bytevector len)))
    (bytevector-copy! bv start out 0 len)
    out))
(define (join . bvs)
  (u8-list->bytevector (append-map bytevector->u8-list bvs)))
(define (read-all buffer n)
  (read-buffer! queue buffer (make-bytevector n 0)))
(define (clgc-error-named? name)
  (lambda (e) (and (clgc-error? e) (equal? (clgc-error-name e) name))))

;; A non-blocking write behind a user event: the bytevector, dropped by
;; the program and collected for, stays alive (a guardian never gives it
;; back) until the write has run, and what it wrote is what it held.
(let* ((buffer (make-buffer context '(read-write) 4096))
       (gate (make-user-event context))
       (guardian (make-guardian))
       (write-event
        (let ((bv (iota-bytevector 4096 7)))
          (guardian bv)
          (enqueue-write-buffer queue buffer bv 0 (list gate)))))
  (do ((i 0 (+ i 1))) ((= i 5))
    (make-bytevector 65536 255) ; garbage where a freed one could go
    (gc))
  (check "the write is held back by its wait list"
         (not (eq? (event-status write-event) 'complete)))
  (check "its bytevector is not collected while the write is pending"
         (not (guardian)))
  (set-user-event-status! gate 'complete)
  (wait-for-events (list write-event))
  (check "a non-blocking write writes what the bytevector held"
         (equal? (read-all buffer 4096) (iota-bytevector 4096 7)))

  ;; A non-blocking read: the event, then the bytes.
  (let* ((into (make-bytevector 16 0))
         (read-event (enqueue-read-buffer queue buffer into 100)))
    (check "a non-blocking read returns an event"
           (cl-event? read-event))
    (wait-for-events (list read-event))
    (check "a non-blocking read at an offset reads the buffer's bytes"
           (equal? into (iota-bytevector 16 107))))

  ;; Fill and copy.
  (let ((fill (enqueue-fill-buffer queue buffer #vu8(1 2 3 4) 8 16)))
    (wait-for-events (list fill))
    (check "a fill writes its pattern over the range, and only there"
           (equal? (read-all buffer 32)
                   (join (iota-bytevector 8 7)
                                      #vu8(1 2 3 4 1 2 3 4 1 2 3 4 1 2 3 4)
                                      (iota-bytevector 8 31)))))
  (let* ((dst (make-buffer context '(read-write) 64))
         (zero (enqueue-fill-buffer queue dst #vu8(0)))
         (copy (enqueue-copy-buffer queue buffer dst 16 32 16 (list zero))))
    (wait-for-events (list copy))
    (check "a copy moves the range to the offset, after its wait list"
           (equal? (read-all dst 64)
                   (join (make-bytevector 32 0)
                         (slice (read-all buffer 32) 16 16)
                         (make-bytevector 16 0))))
    (release dst))

  ;; A sub-buffer: the region of its parent, at the device's alignment.
  (let* ((align (quotient (device-info device 'CL_DEVICE_MEM_BASE_ADDR_ALIGN)
                          8))
         (sub (make-sub-buffer buffer align 32)))
    (check "a sub-buffer is a cl-mem of its size"
           (and (cl-mem? sub) (= (buffer-size sub) 32)))
    (check "a sub-buffer reads its parent's region"
           (equal? (read-all sub 32) (iota-bytevector 32 (+ 7 align))))
    (write-buffer! queue sub (make-bytevector 32 9))
    (check "and writes into it"
           (equal? (slice (read-all buffer (+ align 32)) align 32)
                   (make-bytevector 32 9)))
    (check-raises "a region past the buffer's end is CL_INVALID_VALUE"
                  (clgc-error-named? "CL_INVALID_VALUE")
                  (lambda () (make-sub-buffer buffer 0 8192)))
    (release sub))

  (check-raises "a fill pattern of 3 bytes is CL_INVALID_VALUE"
                (clgc-error-named? "CL_INVALID_VALUE")
                (lambda () (enqueue-fill-buffer queue buffer #vu8(1 2 3))))
  (check-raises "a copy past the end is CL_INVALID_VALUE"
                (clgc-error-named? "CL_INVALID_VALUE")
                (lambda () (enqueue-copy-buffer queue buffer buffer 0 4000 200)))
  (check-raises "a non-bytevector pattern is a wrong-type-arg"
                (lambda (e) (not (clgc-error? e)))
                (lambda () (enqueue-fill-buffer queue buffer "1234")))
  (release buffer))

;; Markers and barriers: complete once their wait lists are, and not
;; before.
(let* ((gate (make-user-event context))
       (marker (enqueue-marker queue (list gate)))
       (barrier (enqueue-barrier queue gate)))
  (check "a marker waits for its wait list"
         (not (eq? (event-status marker) 'complete)))
  (check "so does a barrier"
         (not (eq? (event-status barrier) 'complete)))
  (set-user-event-status! gate 'complete)
  (wait-for-events (list marker barrier))
  (check "both complete once it is"
         (and (eq? (event-status marker) 'complete)
              (eq? (event-status barrier) 'complete)))
  (let ((m (enqueue-marker queue)))
    (wait-for-events (list m))
    (check "a marker without a wait list completes after what came before"
           (eq? (event-status m) 'complete))))

;; Rectangles: a buffer of 8 rows of 8 bytes, 0..63.
(let ((buffer (make-buffer context '(read-write) (iota-bytevector 64 0)))
      (into (make-bytevector 12 0)))
  (read-buffer-rect! queue buffer into #:region '(4 3) #:buffer-origin '(2 1)
                     #:buffer-row-pitch 8)
  (check "read-buffer-rect! reads a 4x3 box, packed"
         (equal? into (u8-list->bytevector '(10 11 12 13 18 19 20 21
                                             26 27 28 29))))
  (write-buffer-rect! queue buffer (make-bytevector 4 255) #:region '(2 2)
                      #:buffer-origin '(0 14) #:buffer-row-pitch 4)
  (check "write-buffer-rect! writes the box, with its own pitch"
         (equal? (slice (read-all buffer 64) 56 8)
                 (u8-list->bytevector '(255 255 58 59 255 255 62 63))))
  (let ((dst (make-buffer context '(read-write) 12)))
    (wait-for-events
     (list (enqueue-copy-buffer-rect queue buffer dst #:region '(4 3)
                                     #:src-origin '(2 1) #:src-row-pitch 8)))
    (check "enqueue-copy-buffer-rect copies the box, packed"
           (equal? (read-all dst 12) into))
    (check-raises "a destination box past its end is refused first"
                  (clgc-error-named? "CL_INVALID_VALUE")
                  (lambda () (enqueue-copy-buffer-rect
                              queue buffer dst #:region '(8 7)
                              #:dst-origin '(0 2))))
    (release dst))
  (check-raises "a box past the buffer's end"
                (clgc-error-named? "CL_INVALID_VALUE")
                (lambda () (read-buffer-rect! queue buffer (make-bytevector 8)
                                              #:region '(4 2)
                                              #:buffer-origin '(6 7)
                                              #:buffer-row-pitch 8)))
  (check-raises "a host bytevector too short for the box"
                (clgc-error-named? "CL_INVALID_VALUE")
                (lambda () (write-buffer-rect! queue buffer (make-bytevector 3)
                                               #:region '(4 1))))
  (check-raises "a row pitch under the width"
                (clgc-error-named? "CL_INVALID_VALUE")
                (lambda () (read-buffer-rect! queue buffer (make-bytevector 8)
                                              #:region '(4 2)
                                              #:buffer-row-pitch 2)))
  (check-raises "an empty region"
                (clgc-error-named? "CL_INVALID_VALUE")
                (lambda () (read-buffer-rect! queue buffer (make-bytevector 8)
                                              #:region '(0 1))))
  (check-raises "a box too large to count"
                (clgc-error-named? "CL_INVALID_VALUE")
                (lambda () (read-buffer-rect! queue buffer (make-bytevector 8)
                                              #:region (list (expt 2 62) 8))))
  (check-raises "the region is required"
                (lambda (e) (not (clgc-error? e)))
                (lambda () (read-buffer-rect! queue buffer (make-bytevector 8))))
  (release buffer))

;; Maps: a bytevector over the mapped region, written through, then
;; unmapped; from then on it is empty, and using it raises.
(let* ((buffer (make-buffer context '(read-write) 64))
       (view (map-buffer! queue buffer #:offset 16 #:size 8)))
  (check "map-buffer! gives a bytevector of the region's size"
         (= (bytevector-length view) 8))
  (do ((i 0 (+ i 1))) ((= i 8)) (bytevector-u8-set! view i (+ 100 i)))
  (wait-for-events (list (unmap! queue view)))
  (check "what was written through the map is in the buffer"
         (equal? (slice (read-all buffer 64) 16 8) (iota-bytevector 8 100)))
  (check "the bytevector is empty after unmap!"
         (= (bytevector-length view) 0))
  (check-raises "and using it raises"
                (lambda (e) (not (clgc-error? e)))
                (lambda () (bytevector-u8-ref view 0)))
  (check-raises "a second unmap! is a wrong-type-arg"
                (lambda (e) (not (clgc-error? e)))
                (lambda () (unmap! queue view)))
  (check-raises "so is a bytevector that was never mapped"
                (lambda (e) (not (clgc-error? e)))
                (lambda () (unmap! queue (make-bytevector 8))))
  (let ((whole (map-buffer! queue buffer #:flags '(read))))
    (check "a read map of the whole buffer sees its bytes"
           (equal? (slice whole 16 8) (iota-bytevector 8 100)))
    (wait-for-events (list (unmap! queue whole))))
  ;; A buffer released while a mapping is out: the mapping keeps it.
  (let* ((held (make-buffer context '(read-write) (iota-bytevector 16 0)))
         (view (map-buffer! queue held)))
    (release held)
    (gc)
    (check "a mapping outlives its buffer's release"
           (equal? view (iota-bytevector 16 0)))
    (wait-for-events (list (unmap! queue view))))
  (check-raises "a region past the buffer: CL_INVALID_VALUE"
                (clgc-error-named? "CL_INVALID_VALUE")
                (lambda () (map-buffer! queue buffer #:offset 60 #:size 8)))
  (release buffer))

(test-exit)
