;;; Info queries by symbol on PoCL: every name of every family the binding
;;; answers, each value of the Scheme type its registry type gives; spot
;;; values; handles from info hold references of their own; info-alist;
;;; unknown keys; error names.
(use-modules (clgc) (clgc-test) (ice-9 exceptions) (rnrs bytevectors)
             (srfi srfi-1))

(define device (pocl-device))
(define context (make-context (list device)))
(define queue (make-command-queue context device #t))
(define program (build-program (make-program context saxpy-source)
                               "-cl-std=CL1.2 -cl-kernel-arg-info"))
(define kernel (make-kernel program "saxpy"))
(define bx (make-buffer context '(read-only) 64))
(define by (make-buffer context '(read-write) 64))
(set-kernel-args! kernel '(2.0 . float) bx by)
(define ev (enqueue-kernel queue kernel 16))
(wait-for-events (list ev))
(define platform (device-info device 'CL_DEVICE_PLATFORM))

(define (all pred) (lambda (v) (and (list? v) (every pred v))))
(define (handle? v) (not (or (number? v) (string? v) (symbol? v) (pair? v)
                             (boolean? v) (null? v))))
(define (enum? v) (or (symbol? v) (exact-integer? v)))

;; What each registry type looks like in Scheme.
(define shapes
  `((string . ,string?) (bytes . ,bytevector?) (bool . ,boolean?)
    (int . ,exact-integer?) (uint . ,exact-integer?)
    (ulong . ,exact-integer?) (size . ,exact-integer?) (float . ,real?)
    (pointer . ,(lambda (v) (or (not v) (pointer? v))))
    (uint_array . ,(all exact-integer?)) (ulong_array . ,(all exact-integer?))
    (size_array . ,(all exact-integer?)) (properties . ,(all exact-integer?))
    (properties_intptr . ,(all exact-integer?))
    (string_array . ,(all string?)) (bitfield . ,(all enum?))
    (enum . ,enum?) (enum_array . ,(all enum?))
    (handle . ,(lambda (v) (or (not v) (handle? v))))
    (handle_array . ,(all handle?))
    (name_version_array . ,(all (lambda (nv) (and (string? (car nv))
                                                  (exact-integer? (cdr nv))))))
    (binaries . ,(all bytevector?))))

;; Queries that the specification refuses with another code than
;; CL_INVALID_VALUE in some cases: CL_QUEUE_SIZE of a host queue.
(define refusals '((CL_QUEUE_SIZE . "CL_INVALID_COMMAND_QUEUE")))

;; Every name of a family through (call name): a value of its type, or
;; CL_INVALID_VALUE for a query the device does not support. Returns how
;; many were answered.
(define (every-name family call)
  (let loop ((names (info-names family)) (answered 0) (refused 0))
    (if (null? names)
        (begin
          (format #t "~a: ~a answered, ~a refused with CL_INVALID_VALUE\n"
                  family answered refused)
          answered)
        (let* ((name (caar names)) (type (cdar names))
               (shape (assq-ref shapes type))
               (result (with-exception-handler
                        (lambda (e) (cons 'raised e))
                        (lambda () (cons 'value (call name)))
                        #:unwind? #t)))
          (if (eq? (car result) 'value)
              (begin
                (check (format #f "~a: ~a is a ~a" family name type)
                       (and shape (shape (cdr result))))
                (loop (cdr names) (+ answered 1) refused))
              (let ((e (cdr result))
                    (want (or (assq-ref refusals name) "CL_INVALID_VALUE")))
                (check (format #f "~a: ~a refused with ~a" family name want)
                       (and (clgc-error? e)
                            (equal? (clgc-error-name e) want)))
                (loop (cdr names) answered (+ refused 1))))))))

(define arg-values '())
(for-each
 (lambda (f)
   (let ((answered (every-name (car f) (cadr f))))
     (check (format #f "~a: at least ~a answered" (car f) (caddr f))
            (>= answered (caddr f)))))
 `((cl_platform_info ,(lambda (n) (platform-info platform n)) 8)
   (cl_device_info ,(lambda (n) (device-info device n)) 90)
   (cl_context_info ,(lambda (n) (context-info context n)) 4)
   (cl_command_queue_info ,(lambda (n) (command-queue-info queue n)) 6)
   (cl_mem_info ,(lambda (n) (mem-info bx n)) 10)
   (cl_program_info ,(lambda (n) (program-info program n)) 9)
   (cl_program_build_info ,(lambda (n) (program-build-info program device n))
                          5)
   (cl_kernel_info ,(lambda (n) (kernel-info kernel n)) 6)
   (cl_kernel_work_group_info
    ,(lambda (n) (kernel-work-group-info kernel device n)) 5)
   (cl_kernel_arg_info ,(lambda (n)
                          (let ((v (kernel-arg-info kernel 1 n)))
                            (set! arg-values (acons n v arg-values))
                            v))
                       5)
   (cl_event_info ,(lambda (n) (event-info ev n)) 5)
   (cl_profiling_info ,(lambda (n) (event-profiling-info ev n)) 4)))

;; Spot values.
(check "platform name"
       (equal? (platform-info platform 'CL_PLATFORM_NAME)
               "Portable Computing Language"))
(check "CL_DEVICE_TYPE includes CL_DEVICE_TYPE_CPU"
       (memq 'CL_DEVICE_TYPE_CPU (device-info device 'CL_DEVICE_TYPE)))
(check "a short name" (equal? (device-info device 'name)
                              (device-info device 'CL_DEVICE_NAME)))
(check "an old key" (equal? (device-info device 'driver-version)
                            (device-info device 'CL_DRIVER_VERSION)))
(check "a context's device"
       (equal? (device-info (car (context-info context 'CL_CONTEXT_DEVICES))
                            'CL_DEVICE_NAME)
               (device-info device 'CL_DEVICE_NAME)))
(check "queue properties"
       (equal? (command-queue-info queue 'CL_QUEUE_PROPERTIES)
               '(CL_QUEUE_PROFILING_ENABLE)))
(check "mem type" (eq? (mem-info bx 'CL_MEM_TYPE) 'CL_MEM_OBJECT_BUFFER))
(check "mem flags" (equal? (mem-info bx 'CL_MEM_FLAGS) '(CL_MEM_READ_ONLY)))
(check "mem size" (= (mem-info bx 'CL_MEM_SIZE) 64))
(check "build status" (eq? (program-build-info program device
                                               'CL_PROGRAM_BUILD_STATUS)
                           'CL_BUILD_SUCCESS))
(check "one binary per device"
       (= (length (program-info program 'CL_PROGRAM_BINARIES)) 1))
(check "kernel name" (equal? (kernel-info kernel 'CL_KERNEL_FUNCTION_NAME)
                             "saxpy"))
(check "argument 1's name" (equal? (assq-ref arg-values 'CL_KERNEL_ARG_NAME)
                                   "x"))
(check "argument 1's qualifier"
       (equal? (assq-ref arg-values 'CL_KERNEL_ARG_TYPE_QUALIFIER)
               '(CL_KERNEL_ARG_TYPE_CONST)))
(check "event status" (eq? (event-info ev 'CL_EVENT_COMMAND_EXECUTION_STATUS)
                           'CL_COMPLETE))
(check "event command" (eq? (event-info ev 'CL_EVENT_COMMAND_TYPE)
                            'CL_COMMAND_NDRANGE_KERNEL))
(check "profiling times in order"
       (<= (event-profiling-info ev 'CL_PROFILING_COMMAND_START)
           (event-profiling-info ev 'CL_PROFILING_COMMAND_END)))

;; A handle info returns holds a reference of its own.
(define refs (command-queue-info queue 'CL_QUEUE_REFERENCE_COUNT))
(define q2 (event-info ev 'CL_EVENT_COMMAND_QUEUE))
(check "retained once"
       (= (command-queue-info queue 'CL_QUEUE_REFERENCE_COUNT) (+ refs 1)))
(release q2)
(check "released once"
       (= (command-queue-info queue 'CL_QUEUE_REFERENCE_COUNT) refs))
(finish queue)

;; Every query the driver answers, as an alist.
(define alist (info-alist device))
(check "alist of a device"
       (equal? (assq-ref alist 'CL_DEVICE_NAME)
               (device-info device 'CL_DEVICE_NAME)))
(check "alist leaves out what the device refuses"
       (not (assq 'CL_DEVICE_BOARD_NAME_AMD alist)))
(check "alist of an event"
       (eq? (assq-ref (info-alist ev) 'CL_EVENT_COMMAND_EXECUTION_STATUS)
            'CL_COMPLETE))

;; Unknown keys, other families' keys, wrong objects.
(check-raises "unknown key" error? (lambda () (device-info device 'colour)))
(check-raises "another family's key" error?
              (lambda () (device-info device 'CL_PLATFORM_NAME)))
(check-raises "a string key" error? (lambda () (device-info device "name")))
(check-raises "a context for a device" error?
              (lambda () (device-info context 'name)))
(check-raises "negative argument index" error?
              (lambda () (kernel-arg-info kernel -1 'CL_KERNEL_ARG_NAME)))
(check-raises "argument index out of range"
              (lambda (e) (and (clgc-error? e)
                               (equal? (clgc-error-name e)
                                       "CL_INVALID_ARG_INDEX")))
              (lambda () (kernel-arg-info kernel 7 'CL_KERNEL_ARG_NAME)))
(check-raises "unknown family" error? (lambda () (info-names 'cl_colour_info)))
(check-raises "alist of a non-object" error? (lambda () (info-alist 42)))

;; Error names come from the registry's table of every code.
(check-raises "an extension's error name"
              (lambda (e) (and (clgc-error? e)
                               (equal? (clgc-error-name e)
                                       "CL_INVALID_EVENT")))
              (lambda () (release ev) (event-info ev 'CL_EVENT_CONTEXT)))

(for-each release (list kernel program bx by queue context))
(test-exit)
