(* Slice 1: the core library against PoCL. *)

open Check_lib.Check

let () =
  let platform, device, context = pocl () in
  ok (Clgc.string_info device "name" <> "") "a device name";
  ok (Clgc.int_info device "max-compute-units" >= 1) "compute units";
  (match Clgc.info device "type" with
  | Clgc.Flags f -> ok (List.mem "CL_DEVICE_TYPE_CPU" f) "CPU in the type flags"
  | _ -> fail "type is no bitfield");
  (match Clgc.info platform "CL_PLATFORM_VERSION" with
  | Clgc.String v -> ok (String.length v > 7 && String.sub v 0 7 = "OpenCL ") "version %s" v
  | _ -> fail "version is no string");
  (match Clgc.info device "no-such-query" with
  | _ -> fail "an unknown query answered"
  | exception Invalid_argument _ -> ());
  ok (Clgc.error_name (-30) = "CL_INVALID_VALUE" && Clgc.error_name (-1000) = "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR")
    "error names";
  ok (Clgc.error_name 12345 = "?") "no name";
  pass "info";

  (* A build that fails raises with the log. *)
  let bad = Clgc.program context "__kernel void k() { undeclared_thing = 1; }" in
  let e = raises_cl "CL_BUILD_PROGRAM_FAILURE" (fun () -> Clgc.build bad) in
  ok (e.call = "clBuildProgram") "the call is named: %s" e.call;
  let contains s sub =
    let n = String.length sub in
    let rec at i = i + n <= String.length s && (String.sub s i n = sub || at (i + 1)) in
    at 0
  in
  ok (contains e.detail "undeclared_thing") "the log names the error: %S" e.detail;
  ok (contains (Clgc.build_log bad device) "undeclared_thing") "build_log";
  Clgc.release bad;
  pass "build failure";

  (* saxpy over Bigarrays: y <- 2x + y *)
  let n = 4096 in
  let q = Clgc.queue ~profiling:true context device in
  let p = Clgc.program context saxpy_source in
  Clgc.build ~options:"-cl-std=CL1.2" p;
  (match Clgc.build_info p device "build-status" with
  | Clgc.Enum s -> ok (s = "CL_BUILD_SUCCESS") "build status %s" s
  | _ -> fail "build status is no enum");
  let k = Clgc.kernel p "saxpy" in
  let x = floats n float_of_int and y = floats n (fun _ -> 1.) in
  let bx = Clgc.buffer_of ~access:`Read_only context x in
  let by = Clgc.buffer context (4 * n) in
  ignore (Clgc.write q by y);
  Clgc.set_args k [ Clgc.Float32 2.; Clgc.Mem bx; Clgc.Mem by ];
  let ev = Clgc.launch q k [| n |] in
  Clgc.wait [ ev ];
  ok (Clgc.status ev = Clgc.Complete) "complete";
  let pr = Clgc.profile ev in
  ok (pr.queued <= pr.submitted && pr.submitted <= pr.started && pr.started <= pr.ended)
    "profile in order";
  let out = floats n (fun _ -> 0.) in
  ignore (Clgc.read q by out);
  for i = 0 to n - 1 do
    ok (out.{i} = (2. *. float_of_int i) +. 1.) "y[%d] = %g" i out.{i}
  done;
  pass "saxpy";

  (* Wrong arguments are the driver's errors, not crashes. *)
  ignore (raises_cl "CL_INVALID_ARG_INDEX" (fun () -> Clgc.set_arg k 7 (Clgc.Int32 1l)));
  ignore (raises_cl "CL_INVALID_ARG_SIZE" (fun () -> Clgc.set_arg k 0 (Clgc.Float64 1.)));
  ignore (raises_cl "CL_INVALID_KERNEL_NAME" (fun () -> Clgc.kernel p "nope"));
  (match Clgc.launch q k [||] with
  | _ -> fail "no global sizes launched"
  | exception Invalid_argument _ -> ());
  ignore
    (raises_cl "CL_INVALID_WORK_DIMENSION" (fun () -> Clgc.launch ~local:[| 1; 1 |] q k [| n |]));
  pass "argument errors";

  (* A user event gates a launch; a failed one fails the wait. *)
  let gate = Clgc.user_event context in
  let ev = Clgc.launch ~wait:[ gate ] q k [| n |] in
  Clgc.flush q;
  ok (Clgc.status ev <> Clgc.Complete) "gated";
  Clgc.set_complete gate;
  Clgc.wait [ ev ];
  let gate = Clgc.user_event context in
  let ev = Clgc.launch ~wait:[ gate ] q k [| n |] in
  Clgc.set_failed gate (-42);
  ignore (raises_cl "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST" (fun () -> Clgc.wait [ ev ]));
  (match Clgc.status ev with
  | Clgc.Failed s -> ok (s < 0) "failed status %d" s
  | _ -> fail "the gated launch did not fail");
  (match Clgc.set_failed gate 3 with
  | _ -> fail "a positive failure"
  | exception Invalid_argument _ -> ());
  pass "user events";

  (* Release: idempotent, an error after. *)
  Clgc.release k;
  Clgc.release k;
  ok (Clgc.released k) "released";
  ignore (raises_cl "CL_INVALID_KERNEL" (fun () -> Clgc.set_arg k 0 (Clgc.Int32 1l)));
  ignore (raises_cl "CL_INVALID_KERNEL" (fun () -> Clgc.launch q k [| 1 |]));
  ignore (raises_cl "CL_INVALID_MEM_OBJECT" (fun () ->
    let m = Clgc.buffer context 16 in
    Clgc.release m;
    Clgc.write q m (floats 4 float_of_int)));
  pass "release";

  (* What the collector finds unreachable is released, the Bigarray of a
     buffer over it kept meanwhile. *)
  for _ = 1 to 200 do
    let b = Clgc.buffer_of context (floats 1024 float_of_int) in
    ignore (Clgc.info b "size")
  done;
  Gc.full_major ();
  Gc.compact ();
  let b = Clgc.buffer_of context (floats 16 float_of_int) in
  Gc.compact ();
  let back = floats 16 (fun _ -> -1.) in
  ignore (Clgc.read q b back);
  ok (back.{15} = 15.) "a buffer over a Bigarray survives compaction";
  pass "collection";

  (* A non-blocking read keeps its Bigarray alive until it completes. *)
  let gate = Clgc.user_event context in
  let ev =
    let dst = floats n (fun _ -> 0.) in
    Clgc.read ~blocking:false ~wait:[ gate ] q by dst
  in
  Gc.full_major ();
  Gc.compact ();
  Clgc.set_complete gate;
  Clgc.wait [ ev ];
  Gc.full_major ();
  pass "non-blocking transfer";

  (* A program's binaries make the same program again: built, it
     computes. *)
  let p = Clgc.program context saxpy_source in
  Clgc.build p;
  let bins = Clgc.binaries p in
  ok (Array.length bins = 1) "one binary per device: %d" (Array.length bins);
  ok (String.length (snd bins.(0)) > 0) "the binary is not empty";
  ok (Clgc.string_info (fst bins.(0)) "name" = Clgc.string_info device "name")
    "the binary's device is the program's";
  let p2 = Clgc.program_of_binaries context (Array.to_list bins) in
  Clgc.build p2;
  let k2 = Clgc.kernel p2 "saxpy" in
  let x = Clgc.buffer_of ~copy:true context (floats 4 float_of_int) in
  let y = Clgc.buffer_of ~copy:true context (floats 4 (fun _ -> 1.)) in
  Clgc.set_args k2 [ Clgc.Float32 2.; Clgc.Mem x; Clgc.Mem y ];
  Clgc.wait [ Clgc.launch q k2 [| 4 |] ];
  let back = floats 4 (fun _ -> 0.) in
  ignore (Clgc.read q y back);
  ok (back.{3} = 7.) "a program from binaries computes: %g" back.{3};
  pass "binaries";

  (* Fill, copy, a sub-buffer; markers and barriers; an out-of-order
     queue; a kernel's work-group and argument info. *)
  let a = Clgc.buffer context 64 and b = Clgc.buffer context 64 in
  ignore (Clgc.fill q a "\x00\x00\x80\x3f");
  (* 1.0f, little endian *)
  ignore (Clgc.fill ~offset:32 ~size:16 q a "\x00\x00\x00\x40");
  ignore (Clgc.copy q ~src:a ~dst:b);
  let back = floats 16 (fun _ -> 0.) in
  ignore (Clgc.read q b back);
  ok (back.{0} = 1. && back.{8} = 2. && back.{11} = 2. && back.{12} = 1.) "fill and copy";
  let sub = Clgc.sub_buffer a ~origin:0 ~size:32 in
  ok (Clgc.int_info sub "size" = 32) "a sub-buffer's size";
  let part = floats 8 (fun _ -> 0.) in
  ignore (Clgc.read q sub part);
  ok (part.{7} = 1.) "a sub-buffer reads its parent";
  let gate = Clgc.user_event context in
  let f = Clgc.fill ~wait:[ gate ] q b "\x00\x00\x40\x40" in
  let m = Clgc.marker q in
  let bar = Clgc.barrier ~wait:[ f ] q in
  ok (Clgc.status m <> Clgc.Complete) "a marker waits for the commands before it";
  Clgc.set_complete gate;
  Clgc.wait [ m; bar ];
  ok (Clgc.status f = Clgc.Complete) "the barrier's command is done";
  let ooo = Clgc.queue ~out_of_order:true context device in
  (match Clgc.info ooo "properties" with
  | Clgc.Flags fl -> ok (List.mem "CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE" fl) "out of order"
  | _ -> fail "queue properties are no bitfield");
  ok
    (match Clgc.work_group_info k2 device "work-group-size" with
    | Clgc.Int n -> n >= 1L
    | _ -> false)
    "a kernel's work-group size";
  ok (Clgc.arg_info k2 1 "name" = Clgc.String "x") "argument 1 is called x";
  pass "fill, copy, sub-buffers, markers, queues, kernel info";

  (* Separate compilation: a header, a library, a program linked with
     it. *)
  let header = Clgc.program context "float twice(float x);" in
  let lib_src = Clgc.program context "float twice(float x) { return 2.0f * x; }" in
  Clgc.compile lib_src;
  let lib = Clgc.link ~library:true context [ lib_src ] in
  let main =
    Clgc.program context
      {|#include "twice.h"
        __kernel void t(__global float *y) { y[get_global_id(0)] = twice(y[get_global_id(0)]); }|}
  in
  Clgc.compile ~headers:[ ("twice.h", header) ] main;
  let linked = Clgc.link context [ main; lib ] in
  let kt = Clgc.kernel linked "t" in
  let y = Clgc.buffer_of ~copy:true context (floats 4 float_of_int) in
  Clgc.set_args kt [ Clgc.Mem y ];
  Clgc.wait [ Clgc.launch q kt [| 4 |] ];
  let back = floats 4 (fun _ -> 0.) in
  ignore (Clgc.read q y back);
  ok (back.{3} = 6.) "a linked program computes: %g" back.{3};
  let bad = Clgc.program context "__kernel void f(__global int *x) { x[0] = y; }" in
  let e = raises_cl "CL_COMPILE_PROGRAM_FAILURE" (fun () -> Clgc.compile bad) in
  ok (String.length e.detail > 0) "a compile error carries the log";
  (match Clgc.compile ~headers:[ ("a\000b", header) ] main with
  | () -> fail "a header name with a NUL was taken"
  | exception Invalid_argument _ -> ());
  pass "compile and link";
  Clgc.finish q
