(** OpenCL for OCaml through clgc: every call lets the runtime lock go
    while OpenCL works, so other threads run and the collector collects
    while a kernel runs or a program builds (docs/ocaml.md).

    Linking this library installs clgc's OCaml runtime adapter when the
    module initialises; it fails with [Failure] if another runtime was
    installed in the process first. *)

(** {1 Errors} *)

type error = { code : int; name : string; call : string; detail : string }
(** A failed OpenCL call: its code and name ([-11],
    ["CL_BUILD_PROGRAM_FAILURE"]), the call (["clBuildProgram"]), and what
    more is known: a build's logs, what was wrong, or [""]. *)

exception Error of error

exception Callback_failed of exn
(** What an event callback raised, raised by the next [wait] or [finish]
    (oldest first). *)

(** {1 Objects} *)

type 'k t
(** An OpenCL object of kind ['k]. It is released by the collector once
    unreachable, or at once by {!release}. *)

type platform = [ `Platform ] t
type device = [ `Device ] t
type context = [ `Context ] t
type queue = [ `Queue ] t
type program = [ `Program ] t
type kernel = [ `Kernel ] t
type mem = [ `Mem ] t
type event = [ `Event ] t
type sampler = [ `Sampler ] t

val release : _ t -> unit
(** Release the object now. Idempotent. Any later use raises {!Error}
    with the kind's [CL_INVALID_*] code; a release while another thread's
    call uses the object takes effect when that call returns. *)

val released : _ t -> bool
(** Whether {!release} was called on the object. *)

(** {1 Platforms, devices, contexts, queues} *)

val platforms : unit -> platform array
(** The loader's platforms, in its order. *)

type device_type = [ `All | `Cpu | `Gpu | `Accelerator | `Default ]

val devices : ?kind:device_type -> platform -> device array
(** The platform's devices of that kind ([`All] by default); [[||]] when
    it has none. *)

val context : device array -> context
val queue : ?profiling:bool -> ?out_of_order:bool -> context -> device -> queue
(** A command queue on any OpenCL version; [profiling] enables
    {!val-profile}. *)

(** {1 Info} *)

type info =
  | String of string
  | Strings of string list
  | Bool of bool
  | Int of int64  (** integers, sizes and addresses *)
  | Float of float
  | Ints of int64 array  (** arrays and property lists *)
  | Flags of string list  (** a bitfield's flags, by their registry names *)
  | Enum of string  (** by its registry name *)
  | Enums of string list
  | Handles of nativeint array  (** objects, by address *)
  | Bytes of string  (** anything else, as the driver laid it out *)

val info : _ t -> string -> info
(** [info obj query]: the object's [clGet*Info] query by the registry's
    name or a short one (["CL_DEVICE_NAME"], ["name"],
    ["max-compute-units"]). [Invalid_argument] for a query the object's
    family does not have. *)

val build_info : program -> device -> string -> info
(** [clGetProgramBuildInfo] (["build-status"], ["build-log"], ["build-options"]). *)

val string_info : _ t -> string -> string
(** {!val-info} of a query whose value is a string. *)

val int_info : _ t -> string -> int
(** {!val-info} of a query whose value is an integer. *)

(** {1 Programs and kernels} *)

val program : context -> string -> program
(** A program from its source. *)

val build : ?options:string -> ?notify:(unit -> unit) -> program -> unit
(** Build it for its context's devices; on failure {!Error} with the
    devices' build logs in [detail]. With [notify], the build may return
    before it is done, on drivers that build on threads of their own, and
    the closure runs once when it is, on the thread the driver calls back
    on (PoCL builds on the calling thread, and calls it there before the
    build returns), holding the runtime lock; what it raises is raised by
    the next {!wait} or {!finish}. *)

val build_log : program -> device -> string
(** The device's build log ([CL_PROGRAM_BUILD_LOG]): a failed {!build}'s
    {!Error} has every device's in [detail] already. *)

val work_group_info : kernel -> device -> string -> info
(** [clGetKernelWorkGroupInfo] ("work-group-size",
    "preferred-work-group-size-multiple", ...), as {!val-info}. *)

val arg_info : kernel -> int -> string -> info
(** [clGetKernelArgInfo] of argument [i] ("name", "type-name",
    "address-qualifier", ...), as {!val-info}; programs are built with
    [-cl-kernel-arg-info] (see {!build}). *)

val compile : ?options:string -> ?headers:(string * program) list -> program -> unit
(** Compile a program from source without linking it ([clCompileProgram]),
    each header a program from source that [#include "name"] finds by
    that name. A compile error raises {!Error}
    [CL_COMPILE_PROGRAM_FAILURE] with the logs in [detail]. *)

val link : ?options:string -> ?library:bool -> context -> program list -> program
(** Link compiled programs (and libraries) into a program whose kernels
    can be made, or into a library with [~library:true]
    ([-create-library]). A link error raises {!Error}
    ([CL_LINK_PROGRAM_FAILURE]). *)

val binaries : program -> (device * string) array
(** What a built program was compiled into, for each of its devices, in
    the program's device order (an empty string for a device it was not
    built for). *)

val program_of_binaries : context -> (device * string) list -> program
(** A program from binaries that {!binaries} gave, for those devices;
    {!build} it before making kernels. Through the library's
    [clgc_program_with_binaries] (clgc/binding.h): an empty list or
    binary raises {!Error} [CL_INVALID_VALUE], and a binary that is not
    the driver's, or one of PoCL's cut short (which would abort the
    process in PoCL), [CL_INVALID_BINARY]. *)
val kernel : program -> string -> kernel
(** The kernel of that name of a built program; {!Error}
    [CL_INVALID_KERNEL_NAME] if it has none, [Invalid_argument] for a name
    with a NUL inside. *)

type arg =
  | Mem of mem
  | Int32 of int32  (** [int], [uint] and their kin *)
  | Int64 of int64  (** [long], [ulong] *)
  | Float32 of float  (** [float] *)
  | Float64 of float  (** [double] *)
  | Local of int  (** [__local] memory of that many bytes *)
  | Raw of bytes  (** any other value, laid out as the kernel expects *)
  | Sampler of sampler  (** a [sampler_t] *)

val set_arg : kernel -> int -> arg -> unit
(** Checked against what the kernel declares by the library's argument
    table (clgc/binding.h): a kind the argument does not take raises
    [Invalid_argument] naming it ("argument 1 (x) of kernel saxpy is a
    __global or __constant pointer: a buffer, not a value"); a value whose
    size is not its type's, or more local memory than the device has,
    {!Error} [CL_INVALID_ARG_SIZE]; an index past the last
    [CL_INVALID_ARG_INDEX]. The kernel holds a buffer set as an argument
    until the argument is set again or the kernel released, so releasing
    the buffer meanwhile frees nothing under it. A launch with an argument
    never set raises [CL_INVALID_KERNEL_ARGS], naming it. *)

val set_args : kernel -> arg list -> unit
(** [set_arg] of each, from index 0. *)

(** {1 Buffers} *)

type ('a, 'b) bigarray = ('a, 'b, Bigarray.c_layout) Bigarray.Array1.t

type access = [ `Read_write | `Read_only | `Write_only ]

val buffer : ?access:access -> context -> int -> mem
(** A buffer of that many bytes. *)

val buffer_of : ?access:access -> ?copy:bool -> context -> (_, _) bigarray -> mem
(** A buffer over the Bigarray's memory, without a copy
    ([CL_MEM_USE_HOST_PTR]; the buffer keeps the Bigarray alive), or a
    copy of it with [~copy:true]. *)

val write :
  ?blocking:bool -> ?offset:int -> ?wait:event list -> queue -> mem -> (_, _) bigarray -> event
(** Write the whole Bigarray into the buffer at [offset] bytes (0). Blocking
    by default; a non-blocking transfer keeps the Bigarray alive until it
    completes, whatever becomes of the event. *)

val read :
  ?blocking:bool -> ?offset:int -> ?wait:event list -> queue -> mem -> (_, _) bigarray -> event
(** Read into the whole Bigarray, as {!write}. *)

val sub_buffer : ?access:access -> mem -> origin:int -> size:int -> mem
(** A region of a buffer: [size] bytes at [origin], which must be aligned
    as the device says ("mem-base-addr-align"); OpenCL keeps the buffer
    alive for it. A region past the buffer's end raises {!Error}
    [CL_INVALID_VALUE]; an image, [Invalid_argument]. *)

val fill : ?offset:int -> ?size:int -> ?wait:event list -> queue -> mem -> string -> event
(** Fill [size] bytes (the rest of the buffer from [offset] by default)
    with repeats of the pattern, 1 to 128 bytes (a power of two OpenCL
    accepts: 1, 2, 4, ...; the offset and size multiples of it). *)

val copy :
  ?src_offset:int -> ?dst_offset:int -> ?size:int -> ?wait:event list -> queue -> src:mem ->
  dst:mem -> event
(** Copy [size] bytes (the rest of [src] by default) between buffers. *)

val write_rect :
  ?blocking:bool -> ?buffer_origin:int array -> ?host_origin:int array ->
  ?buffer_pitches:int * int -> ?host_pitches:int * int -> ?wait:event list -> queue -> mem ->
  region:int array -> (_, _) bigarray -> event
(** Write a rectangle of the Bigarray into one of the buffer
    ([clEnqueueWriteBufferRect]): [region] is its width in bytes, then
    its height and depth in rows and slices (1 to 3 sizes); each origin
    (the corner by default) is in bytes, rows and slices too, and each
    side's pitches [(row, slice)] are in bytes, [0] for packed rows and
    slices. Both sides are checked first (the library's
    [clgc_rect_check]): a rectangle that reaches past the buffer's or
    the Bigarray's end raises {!Error} [CL_INVALID_VALUE] saying which
    side. Blocking, and keeping the Bigarray, as {!write}. *)

val read_rect :
  ?blocking:bool -> ?buffer_origin:int array -> ?host_origin:int array ->
  ?buffer_pitches:int * int -> ?host_pitches:int * int -> ?wait:event list -> queue -> mem ->
  region:int array -> (_, _) bigarray -> event
(** Read a rectangle of the buffer into the Bigarray, as {!write_rect}. *)

val copy_rect :
  ?src_origin:int array -> ?dst_origin:int array -> ?src_pitches:int * int ->
  ?dst_pitches:int * int -> ?wait:event list -> queue -> src:mem -> dst:mem ->
  region:int array -> event
(** Copy a rectangle between buffers ([clEnqueueCopyBufferRect]), both
    sides checked as {!write_rect} checks them; overlapping rectangles of
    one buffer are OpenCL's {!Error} [CL_MEM_COPY_OVERLAP]. *)

type map_access = [ `Read | `Write | `Read_write | `Write_invalidate ]

val map :
  ?access:map_access -> ?offset:int -> ?size:int -> ?wait:event list -> queue -> mem ->
  ('a, 'b) Bigarray.kind -> ('a, 'b) bigarray
(** Map [size] bytes of the buffer at [offset] (the rest of it by default)
    into the host's memory, once the events in [wait] have completed:
    a Bigarray of that kind over the mapped memory, to read ([`Read]),
    write ([`Write], or [`Write_invalidate] when every byte will be
    written, so the device's are not copied in), or both (the default).
    The size must be a multiple of the kind's element. The mapping
    retains the buffer, so {!release} meanwhile frees nothing under the
    Bigarray; a mapping whose Bigarray is collected without {!unmap} is
    unmapped by the next [map] or [unmap]. *)

val unmap : ?wait:event list -> queue -> (_, _) bigarray -> event
(** End the mapping of a Bigarray that {!map} returned: once the event
    completes, the device sees what was written. The Bigarray is emptied
    at once (0 elements: any access raises [Invalid_argument]). A
    sub-array or slice of it is over the same memory, which [unmap]
    cannot empty: do not use it after the unmap (OpenCL leaves what it
    reads undefined; the buffer is kept until it is collected, so it
    reaches no freed memory). [Invalid_argument] for a Bigarray [map] did
    not return, or one unmapped already. *)

(** {1 Images and samplers} *)

type image_type = [ `Image1d | `Image2d | `Image3d | `Image1d_array | `Image2d_array ]

type format = { order : string; channel : string }
(** A format by the registry's names or short ones:
    [{ order = "rgba"; channel = "float" }], or ["CL_RGBA"] and
    ["CL_FLOAT"]. *)

val image : ?access:access -> ?kind:image_type -> context -> format -> int array -> mem
(** An image of those sizes: the width, then the height (a 1D array's
    size), then the depth (a 2D array's size); of the type of that many
    sizes ([`Image1d], [`Image2d], [`Image3d]) unless [kind] says. A name
    that is no format, or sizes that do not fit the type, raise
    [Invalid_argument]; a format the device lacks, {!Error}
    [CL_IMAGE_FORMAT_NOT_SUPPORTED]. An image is a {!mem}: {!set_arg} takes
    it as [Mem] where the kernel takes an image, and refuses it where it
    takes a buffer (and the reverse). *)

val image_formats : ?access:access -> ?kind:image_type -> context -> format list
(** The formats the context's devices support for images of that type
    ([`Image2d]), by the registry's names. *)

val is_image : mem -> bool
(** Whether the memory object is an image, not a buffer (the library's
    [clgc_mem_kind]). *)

val image_info : mem -> string -> info
(** [clGetImageInfo] ("width", "CL_IMAGE_FORMAT", ...), as {!val-info};
    [Invalid_argument] for a buffer. *)

val write_image :
  ?blocking:bool -> ?origin:int array -> ?region:int array -> ?wait:event list ->
  queue -> mem -> (_, _) bigarray -> event
(** Write the Bigarray, packed element by element and row by row, into the
    box of the image at [origin] (the corner) of [region] (the rest of
    the image): 1 to 3 sizes each, an array's layers on its last axis.
    The box is checked first (the library's [clgc_image_box]): one
    outside the image, or a Bigarray smaller than the box, raises {!Error}
    [CL_INVALID_VALUE] saying which; a buffer raises [Invalid_argument].
    Blocking, and keeping the Bigarray, as {!write}. *)

val read_image :
  ?blocking:bool -> ?origin:int array -> ?region:int array -> ?wait:event list ->
  queue -> mem -> (_, _) bigarray -> event
(** Read the box into the Bigarray, as {!write_image}. *)

val sampler : ?normalized:bool -> ?addressing:string -> ?filter:string -> context -> sampler
(** A sampler: coordinates not normalized, addressing ["clamp_to_edge"]
    ([none], [clamp], [repeat], [mirrored_repeat]), filter ["nearest"]
    ([linear]) by default. *)

type color =
  | Float4 of float array  (** a float or normalized format's 4 channels *)
  | Int4 of int32 array  (** an integer format's, signed or not *)

val fill_image :
  ?origin:int array -> ?region:int array -> ?wait:event list -> queue -> mem -> color -> event
(** Fill the box of the image at [origin] of [region] (the whole image by
    default) with a color, its 4 channels as the format takes them
    (red, green, blue, alpha; a format of fewer reads those it has).
    [Invalid_argument] for a color of another type than the format's or
    not of 4 channels, or a buffer; a box outside the image, {!Error}
    [CL_INVALID_VALUE]. *)

val copy_image :
  ?src_origin:int array -> ?dst_origin:int array -> ?region:int array -> ?wait:event list ->
  queue -> src:mem -> dst:mem -> event
(** Copy a box between images of one format, [region] (the rest of [src]
    from [src_origin] by default) checked against both; images of two
    formats are OpenCL's {!Error} [CL_IMAGE_FORMAT_MISMATCH]. *)

val copy_image_to_buffer :
  ?origin:int array -> ?region:int array -> ?offset:int -> ?wait:event list -> queue ->
  src:mem -> dst:mem -> event
(** Copy a box of the image into the buffer at [offset] bytes, packed
    element by element and row by row; a buffer too small for it raises
    {!Error} [CL_INVALID_VALUE]. *)

val copy_buffer_to_image :
  ?offset:int -> ?origin:int array -> ?region:int array -> ?wait:event list -> queue ->
  src:mem -> dst:mem -> event
(** Copy packed elements from the buffer at [offset] into a box of the
    image, as {!copy_image_to_buffer}. *)

(** {1 Launches and events} *)

val launch : ?local:int array -> ?wait:event list -> queue -> kernel -> int array -> event
(** Enqueue the kernel over 1 to 3 global sizes (and local ones: the
    driver's choice by default). *)

val wait : event list -> unit
(** clgc's cooperative wait: other threads run meanwhile. Raises {!Error}
    ([CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST]) if a command failed,
    and {!Callback_failed} for what a callback raised. *)

val marker : ?wait:event list -> queue -> event
(** An event that completes once the events in [wait] have, or, with
    none, every command enqueued before it. *)

val barrier : ?wait:event list -> queue -> event
(** A marker that also holds the queue's later commands until then. *)

val flush : queue -> unit
(** Hand the queue's commands to the device ([clFlush]). *)

val finish : queue -> unit
(** Wait until every command of the queue has completed ([clFinish], the
    runtime lock let go meanwhile); raises {!Callback_failed} as {!wait}
    does. *)

val user_event : context -> event
(** An event the program completes ({!set_complete}) or fails
    ({!set_failed}): a gate for the commands that wait for it. *)

val set_complete : event -> unit
(** Complete a user event. *)
val set_failed : event -> int -> unit
(** Fail a user event with a negative status. *)

type status = Queued | Submitted | Running | Complete | Failed of int

val status : event -> status
(** The command's status now ([CL_EVENT_COMMAND_EXECUTION_STATUS]). *)

val on_status : ?status:[ `Complete | `Running | `Submitted ] -> event -> (status -> unit) -> unit
(** Call the closure once the event reaches that status ([`Complete] by
    default) or fails, with the status. It runs on the thread OpenCL
    calls back on (PoCL's, registered with OCaml on its first callback),
    holding the runtime lock; what it raises is raised by the next
    {!wait} or {!finish} as {!Callback_failed}. *)

val on_release : [< `Mem | `Context ] t -> (unit -> unit) -> unit
(** Call the closure once OpenCL destroys the buffer, image or context
    (OpenCL's destructor callbacks): after its last release, the
    collector's or {!release}'s, and once no command and no object that
    OpenCL keeps alive for it (a sub-buffer, a mapping) uses it any more.
    It runs as {!on_status}'s closures do, often on the thread that let
    the object go; what it raises is raised by the next {!wait} or
    {!finish} as {!Callback_failed}. A context's needs OpenCL 3.0
    ({!Error} [CL_INVALID_OPERATION] or the loader's code before). *)

type profile = { queued : int64; submitted : int64; started : int64; ended : int64 }

val profile : event -> profile
(** The device's clock at each step, in ns, of a command on a queue made
    with [~profiling:true]. *)

(** {1 Completion ports}

    For event loops: an event posted to a port with a tag completes into
    it, and the port's file descriptor is readable until a {!drain}
    returns the tags of the events that completed, with their statuses.
    {!Clgc_lwt} waits this way. *)

type port

val port : unit -> port
val port_fd : port -> Unix.file_descr
(** Watch it for reading; never read or close it. *)

val post : port -> event -> int -> unit
(** clgc holds the event until it completes: the caller may release it. *)

val drain : port -> (int * status) array
(** The tags and statuses of the events completed since the last drain,
    in the order they completed. Raises {!Callback_failed} as {!wait}
    does, but only from a drain that took no completion: one that took
    some returns them, and the failure is raised by the next drain or
    wait. *)

val close_port : port -> unit
(** Close it (what is still undrained is dropped); [Invalid_argument]
    while events posted to it are still to complete. Idempotent. *)

val error_name : int -> string
(** The name of an OpenCL error code (["CL_INVALID_VALUE"]), or ["?"]. *)

(** {1 Every other command}

    Any command of the registry ([clgc/commands.h]'s 252) by name, each
    argument converted by the command's metadata and checked before the
    call, as the Lua and Guile bindings' generic calls are. *)

module Generic : sig
  type nonrec 'k t = 'k t

  type value =
    | Null  (** [NULL], or no callback *)
    | Int of int64  (** any integer parameter: enums, flags, sizes *)
    | Float of float  (** [float] or [double] *)
    | Obj : _ t -> value
        (** an object where the parameter is a handle of its kind
            ([cl_mem] a {!mem}); held for the call *)
    | String of string  (** a [const char *], copied with its NUL *)
    | Memory : (_, _) bigarray -> value
        (** memory the command reads or writes: it must hold all the
            command may reach there by OpenCL's conventions
            ([param_value_size] bytes for [param_value], the count of
            an array), and is kept while OpenCL may use it (until an
            enqueued command's event completes, or a memory object made
            over it is destroyed) *)
    | Out of value ref
        (** one element the command writes ([cl_int *errcode_ret],
            [cl_event *event], [size_t *param_value_size_ret]), set after
            the call: an [Int], a [Float], or an [Obj] that owns the
            reference *)
    | Address of nativeint
        (** a pointer passed as it is, unchecked (as [Obj.magic] is):
            where the conventions say nothing of the size (a property
            list, an image's host pointer), or a handle of a kind the
            binding has no objects of *)

  type _ kind =
    | Platform : [ `Platform ] kind
    | Device : [ `Device ] kind
    | Context : [ `Context ] kind
    | Queue : [ `Queue ] kind
    | Program : [ `Program ] kind
    | Kernel : [ `Kernel ] kind
    | Mem : [ `Mem ] kind
    | Event : [ `Event ] kind
    | Sampler : [ `Sampler ] kind

  val call : string -> value list -> value
  (** [call "clEnqueueFillBuffer" [ Obj q; Obj m; Memory pattern; ... ]]:
      the command's result, an [Int] for a [cl_int] (OpenCL's errors are
      results on this path, not exceptions), an [Obj] owning the
      reference for an object, [Null] for none. [Invalid_argument]
      before anything is called for an unknown command, a wrong number
      of arguments, an argument of a kind its parameter does not take
      (naming it), a [Memory] smaller than what the command reaches
      there or where the size cannot be known, a callback that is not
      [Null]; a released object, its [CL_INVALID_*] {!Error}. *)

  val obj : 'k kind -> value -> 'k t
  (** The object of an [Obj] of that kind, typed: [obj Mem v];
      [Invalid_argument] for any other value. *)
end
