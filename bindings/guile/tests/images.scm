;;; Images and samplers: formats by name, a 2D image written, read, filled
;;; and copied by boxes (checked before OpenCL sees them), arrays and 3D
;;; images, image-info and sampler-info, a sampler passed to a kernel
;;; that reads the image through it.
(use-modules (clgc) (clgc-test) (rnrs bytevectors) (srfi srfi-1))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))

(define (clgc-error-named? name)
  (lambda (e) (and (clgc-error? e) (equal? (clgc-error-name e) name))))
(define (floats bv) (bytevector->floats bv))

(let ((formats (image-formats context)))
  (check "image-formats lists (order type) pairs by the registry's names"
         (and (pair? formats)
              (every (lambda (f) (and (= (length f) 2) (symbol? (car f))))
                     formats)))
  (check "PoCL has RGBA floats"
         (member '(CL_RGBA CL_FLOAT) formats)))

;; A 4x2 RGBA float image: 16 bytes an element.
(define image (make-image context '(rgba float) '(4 2)))
(check "make-image makes a cl-mem" (cl-mem? image))
(check "image-info by short name" (= (image-info image 'width) 4))
(check "image-info: the format, by name"
       (equal? (image-info image 'CL_IMAGE_FORMAT) '(CL_RGBA . CL_FLOAT)))

(define pixels (floats->bytevector (map exact->inexact (iota 32))))
(write-image! queue image pixels)
(check "write-image! then read-image!: the whole image"
       (equal? (floats (read-image! queue image (make-bytevector 128 0)))
               (map exact->inexact (iota 32))))
(check "read-image! of a box: origin (1 1), region (2 1)"
       (equal? (floats (read-image! queue image (make-bytevector 32 0)
                                    #:origin '(1 1) #:region '(2 1)))
               (map exact->inexact (iota 8 20))))

(let* ((into (make-bytevector 64 0))
       (ev (enqueue-read-image queue image into #:region '(1 1)
                               #:origin '(3 0))))
  (wait-for-events (list ev))
  (check "enqueue-read-image: an event, then the bytes"
         (equal? (take (floats into) 4) '(12.0 13.0 14.0 15.0))))

(wait-for-events
 (list (enqueue-fill-image queue image '(0.5 0.25 0 1) #:origin '(0 1)
                           #:region '(4 1))))
(check "enqueue-fill-image fills the box, and only it"
       (equal? (floats (read-image! queue image (make-bytevector 128 0)))
               (append (map exact->inexact (iota 16))
                       (concatenate (make-list 4 '(0.5 0.25 0.0 1.0))))))

(let ((copy (make-image context '(rgba float) '(4 2))))
  (wait-for-events (list (enqueue-copy-image queue image copy
                                             #:src-origin '(0 1)
                                             #:region '(2 1))))
  (check "enqueue-copy-image copies the box to the destination's origin"
         (equal? (take (floats (read-image! queue copy (make-bytevector 128 0)))
                       8)
                 (concatenate (make-list 2 '(0.5 0.25 0.0 1.0)))))
  (check-raises "a copy past the destination is refused"
                (clgc-error-named? "CL_INVALID_VALUE")
                (lambda () (enqueue-copy-image queue image copy
                                               #:dst-origin '(3 0))))
  (release copy))

;; Boxes that do not fit, and short bytevectors, never reach OpenCL.
(check-raises "an origin outside the image"
              (clgc-error-named? "CL_INVALID_VALUE")
              (lambda () (read-image! queue image (make-bytevector 128)
                                      #:origin '(4 0))))
(check-raises "a region past the image"
              (clgc-error-named? "CL_INVALID_VALUE")
              (lambda () (read-image! queue image (make-bytevector 128)
                                      #:region '(5 1))))
(check-raises "a region too large to count"
              (clgc-error-named? "CL_INVALID_VALUE")
              (lambda () (read-image! queue image (make-bytevector 128)
                                      #:region (list (expt 2 62) 1))))
(check-raises "a bytevector shorter than the region"
              (clgc-error-named? "CL_INVALID_VALUE")
              (lambda () (write-image! queue image (make-bytevector 100))))
(check-raises "an unknown keyword"
              (lambda (e) (not (clgc-error? e)))
              (lambda () (read-image! queue image (make-bytevector 128)
                                      #:origine '(0 0))))
(check-raises "an unknown format name"
              (lambda (e) (not (clgc-error? e)))
              (lambda () (make-image context '(rgbz float) '(4 2))))
(check-raises "a buffer is no image"
              (clgc-error-named? "CL_INVALID_MEM_OBJECT")
              (lambda () (read-image! queue (make-buffer context 'read-write 64)
                                      (make-bytevector 64))))

;; Arrays and 3D images: their layers on the axis OpenCL puts them.
(let ((a1 (make-image context '(r unsigned-int8) '(8 3) #:type '1d-array))
      (a2 (make-image context '(r unsigned-int8) '(4 4 2) #:type '2d-array))
      (v3 (make-image context '(r unsigned-int8) '(4 4 2))))
  (check "a 1D array: its size" (= (image-info a1 'array-size) 3))
  (write-image! queue a1 (u8-list->bytevector (iota 24)))
  (check "a 1D array's layer 2 is the box's second axis"
         (equal? (bytevector->u8-list
                  (read-image! queue a1 (make-bytevector 8) #:origin '(0 2)
                               #:region '(8 1)))
                 (iota 8 16)))
  (check "a 2D array: its size" (= (image-info a2 'array-size) 2))
  (check "a 3D image: its depth" (= (image-info v3 'depth) 2))
  (check-raises "a 2D array's layer past its size"
                (clgc-error-named? "CL_INVALID_VALUE")
                (lambda () (read-image! queue a2 (make-bytevector 16)
                                        #:origin '(0 0 2))))
  (for-each release (list a1 a2 v3)))

;; Samplers, by name, and one passed to a kernel.
(define sampler (make-sampler context #:addressing 'clamp-to-edge
                              #:filter 'nearest))
(check "make-sampler makes a cl-sampler" (cl-sampler? sampler))
(check "sampler-info: the addressing mode, by name"
       (eq? (sampler-info sampler 'addressing-mode) 'CL_ADDRESS_CLAMP_TO_EDGE))
(check "sampler-info: not normalized by default"
       (eq? (sampler-info sampler 'normalized-coords) #f))
(check-raises "an unknown addressing mode"
              (lambda (e) (not (clgc-error? e)))
              (lambda () (make-sampler context #:addressing 'wrap)))

(let* ((program (build-program (make-program context "
__kernel void sample(read_only image2d_t im, sampler_t s, __global float4 *out)
{
    out[0] = read_imagef(im, s, (int2)(2, 0));
}")))
       (kernel (make-kernel program "sample"))
       (out (make-buffer context '(read-write) 16)))
  (set-kernel-arg! kernel 0 image)
  (set-kernel-arg! kernel 1 sampler)
  (set-kernel-arg! kernel 2 out)
  (wait-for-events (list (enqueue-kernel queue kernel 1)))
  (check "a kernel reads the image through the sampler"
         (equal? (floats (read-buffer! queue out (make-bytevector 16)))
                 '(8.0 9.0 10.0 11.0))))

(release sampler)
(check "a released sampler" (released? sampler))
(check-raises "is CL_INVALID_SAMPLER when used"
              (clgc-error-named? "CL_INVALID_SAMPLER")
              (lambda () (sampler-info sampler 'addressing-mode)))
(test-exit)
