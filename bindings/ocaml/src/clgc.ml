(* The OCaml side of the binding: types, optional arguments, finalisers.
   The C stubs (clgc_ml.h) take and return handles, custom blocks; a
   record around each is what the collector watches. *)

type error = { code : int; name : string; call : string; detail : string }

exception Error of error
exception Callback_failed of exn

let () =
  Callback.register_exception "Clgc.Error"
    (Error { code = 0; name = ""; call = ""; detail = "" });
  Callback.register_exception "Clgc.Callback_failed" (Callback_failed Exit);
  Printexc.register_printer (function
    | Error { code; name; call; detail } ->
        Some
          (Printf.sprintf "Clgc.Error: %s failed: %s (%d)%s" call name code
             (if detail = "" then "" else ": " ^ detail))
    | _ -> None)

type handle

external install : unit -> unit = "ml_clgc_install"

(* The runtime lock is systhreads': linking Thread makes sure it exists
   before the adapter is installed. *)
let () =
  ignore (Thread.self ());
  install ()

(* An object. The buffers set as a kernel's arguments are held by the
   kernel's argument table in the library (clgc/binding.h), a buffer's
   Bigarray by the C side until OpenCL destroys the buffer. *)
type 'k t = { h : handle }
type platform = [ `Platform ] t
type device = [ `Device ] t
type context = [ `Context ] t
type queue = [ `Queue ] t
type program = [ `Program ] t
type kernel = [ `Kernel ] t
type mem = [ `Mem ] t
type event = [ `Event ] t
type sampler = [ `Sampler ] t

external release_handle : handle -> unit = "ml_clgc_release"
external released_handle : handle -> bool = "ml_clgc_released"
external kind : handle -> string = "ml_clgc_kind"

let release o = release_handle o.h
let released o = released_handle o.h

let own h =
  let o = { h } in
  Gc.finalise release o;
  o

(* Platforms and devices are not counted: no finaliser. *)
let plain h = { h }

external platforms_ : unit -> handle array = "ml_clgc_platforms"
external devices_ : handle -> int64 -> handle array = "ml_clgc_devices"
external context_ : handle array -> handle = "ml_clgc_context"
external queue_ : handle -> handle -> int64 -> handle = "ml_clgc_queue"

let platforms () = Array.map plain (platforms_ ())

type device_type = [ `All | `Cpu | `Gpu | `Accelerator | `Default ]

let devices ?(kind = `All) p =
  let bits =
    match kind with
    | `Default -> 1L
    | `Cpu -> 2L
    | `Gpu -> 4L
    | `Accelerator -> 8L
    | `All -> 0xFFFFFFFFL
  in
  (* Root devices: releasing one does nothing, so they are plain too. *)
  Array.map plain (devices_ p.h bits)

let context devices = own (context_ (Array.map (fun d -> d.h) devices))
(* CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE (1), CL_QUEUE_PROFILING_ENABLE (2) *)
let queue ?(profiling = false) ?(out_of_order = false) c d =
  let bits = Int64.logor (if out_of_order then 1L else 0L) (if profiling then 2L else 0L) in
  own (queue_ c.h d.h bits)

type info =
  | String of string
  | Strings of string list
  | Bool of bool
  | Int of int64
  | Float of float
  | Ints of int64 array
  | Flags of string list
  | Enum of string
  | Enums of string list
  | Handles of nativeint array
  | Bytes of string

(* What some families take besides the object (clgc_info_extra_t). *)
type extra = Device of handle | Arg_index of int

external info_ : handle -> string -> string -> extra option -> info = "ml_clgc_info"

let family o =
  match kind o.h with
  | "platform" -> "cl_platform_info"
  | "device" -> "cl_device_info"
  | "context" -> "cl_context_info"
  | "command_queue" -> "cl_command_queue_info"
  | "program" -> "cl_program_info"
  | "kernel" -> "cl_kernel_info"
  | "mem" -> "cl_mem_info"
  | "sampler" -> "cl_sampler_info"
  | _ -> "cl_event_info"

let info o q = info_ o.h (family o) q None
let build_info p d q = info_ p.h "cl_program_build_info" q (Some (Device d.h))
let work_group_info k d q = info_ k.h "cl_kernel_work_group_info" q (Some (Device d.h))
let arg_info k i q = info_ k.h "cl_kernel_arg_info" q (Some (Arg_index i))

let string_info o q =
  match info o q with
  | String s -> s
  | _ -> invalid_arg ("Clgc.string_info: " ^ q ^ " is no string")

let int_info o q =
  match info o q with
  | Int i -> Int64.to_int i
  | Bool b -> Bool.to_int b
  | _ -> invalid_arg ("Clgc.int_info: " ^ q ^ " is no integer")

external program_ : handle -> string -> handle = "ml_clgc_program"
external build_ : handle -> string -> unit = "ml_clgc_build"
external build_log_ : handle -> handle -> string = "ml_clgc_build_log"
external kernel_ : handle -> string -> handle = "ml_clgc_kernel"

let program c src = own (program_ c.h src)
external build_notify_ : handle -> string -> (unit -> unit) -> unit = "ml_clgc_build_notify"

(* -cl-kernel-arg-info: without it a driver may keep no argument info, and
   the kernels' argument tables could not tell a pointer from a number. *)
let build ?(options = "") ?notify p =
  let options = options ^ " -cl-kernel-arg-info" in
  match notify with
  | None -> build_ p.h options
  | Some f -> build_notify_ p.h options f
let build_log p d = build_log_ p.h d.h

external compile_ : handle -> string -> (string * handle) array -> unit = "ml_clgc_compile"
external link_ : handle -> string -> handle array -> bool -> handle = "ml_clgc_link"

(* -cl-kernel-arg-info, as build gives it. *)
let compile ?(options = "") ?(headers = []) p =
  compile_ p.h (options ^ " -cl-kernel-arg-info")
    (Array.of_list (List.map (fun (name, h) -> (name, h.h)) headers))

let link ?(options = "") ?(library = false) c programs =
  own (link_ c.h options (Array.of_list (List.map (fun p -> p.h) programs)) library)

external binaries_ : handle -> (handle * string) array = "ml_clgc_binaries"
external program_of_binaries_ : handle -> (handle * string) array -> handle
  = "ml_clgc_program_of_binaries"

let binaries p = Array.map (fun (d, b) -> (plain d, b)) (binaries_ p.h)

let program_of_binaries c bins =
  own (program_of_binaries_ c.h (Array.of_list (List.map (fun (d, b) -> (d.h, b)) bins)))
let kernel p name = own (kernel_ p.h name)

type arg =
  | Mem of mem
  | Int32 of int32
  | Int64 of int64
  | Float32 of float
  | Float64 of float
  | Local of int
  | Raw of bytes
  | Sampler of sampler

external set_arg_ : handle -> int -> arg -> unit = "ml_clgc_set_arg"

let set_arg k i a = set_arg_ k.h i a
let set_args k args = List.iteri (set_arg k) args

type ('a, 'b) bigarray = ('a, 'b, Bigarray.c_layout) Bigarray.Array1.t
type access = [ `Read_write | `Read_only | `Write_only ]

let access_bits = function
  | `Read_write -> 1L
  | `Write_only -> 2L
  | `Read_only -> 4L

external buffer_ : handle -> int64 -> int -> handle = "ml_clgc_buffer"
external buffer_of_ : handle -> int64 -> ('a, 'b) bigarray -> handle = "ml_clgc_buffer_of"

let buffer ?(access = `Read_write) c size = own (buffer_ c.h (access_bits access) size)

let buffer_of ?(access = `Read_write) ?(copy = false) c ba =
  (* CL_MEM_COPY_HOST_PTR (32) or CL_MEM_USE_HOST_PTR (8) *)
  let bits = Int64.logor (access_bits access) (if copy then 32L else 8L) in
  own (buffer_of_ c.h bits ba)

external transfer_ :
  handle -> handle -> ('a, 'b) bigarray -> int -> bool -> bool -> handle list -> handle
  = "ml_clgc_transfer_bc" "ml_clgc_transfer"

let handles = List.map (fun e -> e.h)

let write ?(blocking = true) ?(offset = 0) ?(wait = []) q m ba =
  own (transfer_ q.h m.h ba offset blocking true (handles wait))

let read ?(blocking = true) ?(offset = 0) ?(wait = []) q m ba =
  own (transfer_ q.h m.h ba offset blocking false (handles wait))

type image_type = [ `Image1d | `Image2d | `Image3d | `Image1d_array | `Image2d_array ]

(* Its index in the stubs' table (image.c). *)
let image_type_index = function
  | `Image1d -> 0
  | `Image2d -> 1
  | `Image3d -> 2
  | `Image1d_array -> 3
  | `Image2d_array -> 4

type format = { order : string; channel : string }

external image_ : handle -> int64 -> string * string -> int option -> int array -> handle
  = "ml_clgc_image"
external image_formats_ : handle -> int64 -> int option -> (string * string) array
  = "ml_clgc_image_formats"
external image_transfer_ :
  handle -> handle -> ('a, 'b) bigarray -> int array option -> int array option -> bool -> bool ->
  handle list -> handle = "ml_clgc_image_transfer_bc" "ml_clgc_image_transfer"
external is_image_ : handle -> bool = "ml_clgc_is_image"
external sampler_ : handle -> bool -> string -> string -> handle = "ml_clgc_sampler"

let image ?(access = `Read_write) ?kind c f sizes =
  own
    (image_ c.h (access_bits access) (f.order, f.channel)
       (Option.map image_type_index kind) sizes)

let image_formats ?(access = `Read_write) ?(kind = `Image2d) c =
  Array.to_list
    (Array.map
       (fun (order, channel) -> { order; channel })
       (image_formats_ c.h (access_bits access) (Some (image_type_index kind))))

let is_image m = is_image_ m.h

(* PoCL answers a buffer's width 0 rather than refuse it. *)
let image_info m q =
  if not (is_image m) then invalid_arg "Clgc.image_info: a buffer, not an image";
  info_ m.h "cl_image_info" q None

let sampler ?(normalized = false) ?(addressing = "clamp_to_edge") ?(filter = "nearest") c =
  own (sampler_ c.h normalized addressing filter)

let write_image ?(blocking = true) ?origin ?region ?(wait = []) q m ba =
  own (image_transfer_ q.h m.h ba origin region blocking true (handles wait))

let read_image ?(blocking = true) ?origin ?region ?(wait = []) q m ba =
  own (image_transfer_ q.h m.h ba origin region blocking false (handles wait))

external launch_ : handle -> handle -> int array -> int array -> handle list -> handle
  = "ml_clgc_launch"

external wait_ : handle list -> unit = "ml_clgc_wait"
external queue_call : handle -> bool -> unit = "ml_clgc_queue_call"
external user_event_ : handle -> handle = "ml_clgc_user_event"
external set_status_ : handle -> int -> unit = "ml_clgc_set_status"
external status_ : handle -> int = "ml_clgc_status"
external on_status_ : handle -> int -> (int -> unit) -> unit = "ml_clgc_on_status"

let launch ?(local = [||]) ?(wait = []) q k global =
  own (launch_ q.h k.h global local (handles wait))

let wait events = wait_ (handles events)

external marker_ : handle -> bool -> handle list -> handle = "ml_clgc_marker"

let marker ?(wait = []) q = own (marker_ q.h false (handles wait))
let barrier ?(wait = []) q = own (marker_ q.h true (handles wait))

external sub_buffer_ : handle -> int64 -> int -> int -> handle = "ml_clgc_sub_buffer"

external fill_ : handle -> handle -> string -> int -> int -> handle list -> handle
  = "ml_clgc_fill_bc" "ml_clgc_fill"

external copy_ : handle -> handle -> handle -> int -> int -> int -> handle list -> handle
  = "ml_clgc_copy_bc" "ml_clgc_copy"

let sub_buffer ?(access = `Read_write) m ~origin ~size =
  own (sub_buffer_ m.h (access_bits access) origin size)

let fill ?(offset = 0) ?size ?(wait = []) q m pattern =
  let size =
    match size with
    | Some s -> s
    | None -> (match info m "size" with Int s -> Int64.to_int s - offset | _ -> 0)
  in
  own (fill_ q.h m.h pattern offset size (handles wait))

let copy ?(src_offset = 0) ?(dst_offset = 0) ?size ?(wait = []) q ~src ~dst =
  let size =
    match size with
    | Some s -> s
    | None -> (match info src "size" with Int s -> Int64.to_int s - src_offset | _ -> 0)
  in
  own (copy_ q.h src.h dst.h src_offset dst_offset size (handles wait))

(* A rectangle's geometry for the stubs (mem.c): both origins, the region
   and both sides' pitches, 13 numbers, each axis not given 0 (1 for the
   region). *)
let rect_geometry who ~region o0 o1 (r0, s0) (r1, s1) =
  let axes rest a =
    let n = Array.length a in
    if n < 1 || n > 3 then invalid_arg (who ^ ": 1 to 3 sizes");
    Array.init 3 (fun i -> if i < n then a.(i) else rest)
  in
  let g = Array.concat [ axes 0 o0; axes 0 o1; axes 1 region; [| r0; s0; r1; s1 |] ] in
  if Array.exists (fun x -> x < 0) g then invalid_arg (who ^ ": a negative size");
  g

external rect_transfer_ :
  handle -> handle -> ('a, 'b) bigarray -> int array -> bool -> bool -> handle list -> handle
  = "ml_clgc_rect_transfer_bc" "ml_clgc_rect_transfer"

external copy_rect_ : handle -> handle -> handle -> int array -> handle list -> handle
  = "ml_clgc_copy_rect"

let rect_transfer who write ?(blocking = true) ?(buffer_origin = [| 0 |])
    ?(host_origin = [| 0 |]) ?(buffer_pitches = (0, 0)) ?(host_pitches = (0, 0)) ?(wait = [])
    q m ~region ba =
  let g = rect_geometry who ~region buffer_origin host_origin buffer_pitches host_pitches in
  own (rect_transfer_ q.h m.h ba g blocking write (handles wait))

let write_rect ?blocking ?buffer_origin ?host_origin ?buffer_pitches ?host_pitches ?wait q m
    ~region ba =
  rect_transfer "Clgc.write_rect" true ?blocking ?buffer_origin ?host_origin ?buffer_pitches
    ?host_pitches ?wait q m ~region ba

let read_rect ?blocking ?buffer_origin ?host_origin ?buffer_pitches ?host_pitches ?wait q m
    ~region ba =
  rect_transfer "Clgc.read_rect" false ?blocking ?buffer_origin ?host_origin ?buffer_pitches
    ?host_pitches ?wait q m ~region ba

let copy_rect ?(src_origin = [| 0 |]) ?(dst_origin = [| 0 |]) ?(src_pitches = (0, 0))
    ?(dst_pitches = (0, 0)) ?(wait = []) q ~src ~dst ~region =
  let g = rect_geometry "Clgc.copy_rect" ~region src_origin dst_origin src_pitches dst_pitches in
  own (copy_rect_ q.h src.h dst.h g (handles wait))

type map_access = [ `Read | `Write | `Read_write | `Write_invalidate ]

external map_ :
  handle -> handle -> int64 -> int -> int -> ('a, 'b) Bigarray.kind -> handle list ->
  ('a, 'b) bigarray = "ml_clgc_map_bc" "ml_clgc_map"

external unmap_ : handle -> ('a, 'b) bigarray -> handle list -> handle = "ml_clgc_unmap"

let map ?(access = `Read_write) ?(offset = 0) ?(size = -1) ?(wait = []) q m kind =
  if size < -1 then invalid_arg "Clgc.map: a negative size";
  (* CL_MAP_READ 1, CL_MAP_WRITE 2, CL_MAP_WRITE_INVALIDATE_REGION 4 *)
  let flags =
    match access with `Read -> 1L | `Write -> 2L | `Read_write -> 3L | `Write_invalidate -> 4L
  in
  map_ q.h m.h flags offset size kind (handles wait)

let unmap ?(wait = []) q ba = own (unmap_ q.h ba (handles wait))

type color = Float4 of float array | Int4 of int32 array

external fill_image_ :
  handle -> handle -> color -> int array option -> int array option -> handle list -> handle
  = "ml_clgc_fill_image_bc" "ml_clgc_fill_image"

external copy_image_ :
  handle -> handle -> handle -> int array option -> int array option -> int array option ->
  handle list -> handle = "ml_clgc_copy_image_bc" "ml_clgc_copy_image"

external image_buffer_copy_ :
  handle -> handle -> handle -> int array option -> int array option -> int -> bool ->
  handle list -> handle = "ml_clgc_image_buffer_copy_bc" "ml_clgc_image_buffer_copy"

let fill_image ?origin ?region ?(wait = []) q m color =
  own (fill_image_ q.h m.h color origin region (handles wait))

let copy_image ?src_origin ?dst_origin ?region ?(wait = []) q ~src ~dst =
  own (copy_image_ q.h src.h dst.h src_origin dst_origin region (handles wait))

let copy_image_to_buffer ?origin ?region ?(offset = 0) ?(wait = []) q ~src ~dst =
  own (image_buffer_copy_ q.h src.h dst.h origin region offset true (handles wait))

let copy_buffer_to_image ?(offset = 0) ?origin ?region ?(wait = []) q ~src ~dst =
  own (image_buffer_copy_ q.h dst.h src.h origin region offset false (handles wait))

let flush q = queue_call q.h false
let finish q = queue_call q.h true
let user_event c = own (user_event_ c.h)
let set_complete e = set_status_ e.h 0

let set_failed e status =
  if status >= 0 then invalid_arg "Clgc.set_failed: a negative status";
  set_status_ e.h status

type status = Queued | Submitted | Running | Complete | Failed of int

let status_of = function
  | 0 -> Complete
  | 1 -> Running
  | 2 -> Submitted
  | 3 -> Queued
  | s -> Failed s

let status e = status_of (status_ e.h)

let on_status ?(status = `Complete) e f =
  let type_ = match status with `Complete -> 0 | `Running -> 1 | `Submitted -> 2 in
  on_status_ e.h type_ (fun s -> f (status_of s))

external on_release_ : handle -> (int -> unit) -> unit = "ml_clgc_on_release"

let on_release (o : [< `Mem | `Context ] t) f = on_release_ o.h (fun _ -> f ())

type profile = { queued : int64; submitted : int64; started : int64; ended : int64 }

let profile e =
  let get q =
    match info_ e.h "cl_profiling_info" q None with
    | Int i -> i
    | _ -> assert false
  in
  { queued = get "queued"; submitted = get "submit"; started = get "start"; ended = get "end" }

type port

external port : unit -> port = "ml_clgc_port"
(* On Unix a file_descr is the int itself, as the Unix library's stubs
   return it. *)
external port_fd : port -> Unix.file_descr = "ml_clgc_port_fd"
external post_ : port -> handle -> int -> unit = "ml_clgc_post"
external drain_ : port -> (int * int) array = "ml_clgc_drain"
external close_port : port -> unit = "ml_clgc_close_port"
external error_name : int -> string = "ml_clgc_error_name"

let post p e tag = post_ p e.h tag
let drain p = Array.map (fun (tag, s) -> (tag, status_of s)) (drain_ p)

module Generic = struct
  type nonrec 'k t = 'k t

  type value =
    | Null
    | Int of int64
    | Float of float
    | Obj : _ t -> value
    | String of string
    | Memory : (_, _) bigarray -> value
    | Out of value ref
    | Address of nativeint

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

  (* What the stub returns (generic.c): objects as handles, to own here. *)
  type raw = R_null | R_int of int64 | R_float of float | R_obj of handle | R_address of nativeint

  external call_ : string -> value array -> raw * raw array = "ml_clgc_call"

  let of_raw = function
    | R_null -> Null
    | R_int i -> Int i
    | R_float f -> Float f
    | R_obj h -> (
        match kind h with "platform" | "device" -> Obj (plain h) | _ -> Obj (own h))
    | R_address a -> Address a

  let call name args =
    let args = Array.of_list args in
    let result, outs = call_ name args in
    Array.iteri
      (fun i a -> match a with Out r -> r := of_raw outs.(i) | _ -> ())
      args;
    of_raw result

  let kind_name : type k. k kind -> string = function
    | Platform -> "platform"
    | Device -> "device"
    | Context -> "context"
    | Queue -> "command_queue"
    | Program -> "program"
    | Kernel -> "kernel"
    | Mem -> "mem"
    | Event -> "event"
    | Sampler -> "sampler"

  let obj : type k. k kind -> value -> k t =
   fun k v ->
    match v with
    (* The same record, its finaliser with it; 'k is a phantom, checked
       against the handle's kind here. *)
    | Obj o when kind o.h = kind_name k -> (Obj.magic o : k t)
    | _ -> invalid_arg ("Clgc.Generic.obj: not an Obj of kind " ^ kind_name k)
end
