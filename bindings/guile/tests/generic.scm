;;; The generic path: any OpenCL command by name through clgc's wrappers,
;;; arguments converted by the command's metadata; handles adopted back.
(use-modules (clgc) (clgc-test) (rnrs bytevectors) (system foreign))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device))

;; clGetPlatformIDs(0, NULL, &n)
(define count (make-bytevector 4 0))
(check "clGetPlatformIDs returns CL_SUCCESS"
       (= 0 (command-call "clGetPlatformIDs" 0 #f count)))
(check "at least as many platforms as (platforms)"
       (= (bytevector-u32-native-ref count 0) (length (platforms))))

;; clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, 4, &units, NULL)
(define units (make-bytevector 4 0))
(check "clGetDeviceInfo returns CL_SUCCESS"
       (= 0 (command-call "clGetDeviceInfo" device #x1002 4 units #f)))
(check "same compute units as device-info"
       (= (bytevector-u32-native-ref units 0)
          (device-info device 'max-compute-units)))

;; clCreateBuffer returns a handle: adopt it as a buffer object.
(define err (make-bytevector 4 1))
(define p (command-call "clCreateBuffer" context 1 64 #f err))
(check "clCreateBuffer's errcode" (= 0 (bytevector-s32-native-ref err 0)))
(check "a pointer came back" (and (pointer? p) (not (null-pointer? p))))
(define buf (pointer->object 'buffer p))
(check "adopted buffer's size" (= (buffer-size buf) 64))
(check "handle->pointer gives it back"
       (= (pointer-address (handle->pointer buf)) (pointer-address p)))
(check "clFinish through the generic path"
       (= 0 (command-call "clFinish" queue)))
(check "an OpenCL error is a return value on this path"
       (= -36 (command-call "clFinish" #f))) ; CL_INVALID_COMMAND_QUEUE
(release buf)
(check "released" (released? buf))
(test-exit)
