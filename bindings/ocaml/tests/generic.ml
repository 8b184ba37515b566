(* The generic call: commands the typed API has no value for, by name,
   their arguments checked by the command's metadata; memory kept while
   OpenCL uses it; and each misuse an exception before the call. *)

open Check_lib.Check
open Clgc.Generic

let int32s n = Bigarray.(Array1.create int32 c_layout n)

let () =
  let _, device, context = pocl () in
  let q = Clgc.queue context device in
  (* A query: CL_DEVICE_MAX_COMPUTE_UNITS (0x1002) into 4 bytes. *)
  let units = int32s 1 in
  ok (call "clGetDeviceInfo" [ Obj device; Int 0x1002L; Int 4L; Memory units; Null ] = Int 0L) "a query";
  ok (Int32.to_int units.{0} = Clgc.int_info device "max-compute-units") "its value";
  (* A buffer made, filled and read back, an event out. *)
  let err = ref Null in
  let b = obj Mem (call "clCreateBuffer" [ Obj context; Int 1L; Int 64L; Null; Out err ]) in
  ok (!err = Int 0L) "errcode_ret out";
  let pattern = int32s 1 in
  pattern.{0} <- 42l;
  let ev = ref Null in
  ok (call "clEnqueueFillBuffer" [ Obj q; Obj b; Memory pattern; Int 4L; Int 0L; Int 64L; Int 0L; Null; Out ev ] = Int 0L) "a fill";
  Clgc.wait [ obj Event !ev ];
  let back = int32s 16 in
  ignore (Clgc.read q b back);
  ok (back.{15} = 42l) "filled through the generic path";
  (* A kernel made by name, launched through the typed API. *)
  let p = Clgc.program context saxpy_source in
  Clgc.build p;
  let k = obj Kernel (call "clCreateKernel" [ Obj p; String "saxpy"; Out err ]) in
  ok (!err = Int 0L && Clgc.string_info k "function-name" = "saxpy") "a kernel by name";
  (* A void result, a float argument: clSetKernelArg of a float. *)
  let a = Bigarray.(Array1.create float32 c_layout 1) in
  a.{0} <- 2.;
  ok (call "clSetKernelArg" [ Obj k; Int 0L; Int 4L; Memory a ] = Int 0L) "an argument by bytes";
  pass "generic calls";

  (* Memory kept: a non-blocking read held back by a barrier, its
     Bigarray dropped and collected meanwhile; a buffer over a Bigarray's
     memory, the Bigarray dropped (valgrind would see either freed). *)
  let gate = Clgc.user_event context in
  ignore (Clgc.barrier ~wait:[ gate ] q);
  ok (call "clEnqueueReadBuffer" [ Obj q; Obj b; Int 0L; Int 0L; Int 64L; Memory (int32s 16); Int 0L; Null; Null ] = Int 0L) "a read enqueued";
  Gc.full_major ();
  Clgc.set_complete gate;
  Clgc.finish q;
  let over = int32s 4 in
  Bigarray.Array1.fill over 7l;
  let b2 = obj Mem (call "clCreateBuffer" [ Obj context; Int 9L (* READ_WRITE | USE_HOST_PTR *); Int 16L; Memory over; Null ]) in
  Gc.full_major ();
  let four = int32s 4 in
  ignore (Clgc.read q b2 four);
  ok (four.{3} = 7l) "a buffer over a dropped Bigarray";
  pass "memory kept";

  invalid "no such command" (fun () -> call "clNope" []);
  invalid "a NUL in the name" (fun () -> call "clFinish\000" [ Obj q ]);
  invalid "too few arguments" (fun () -> call "clFinish" []);
  invalid "an Int for a handle" (fun () -> call "clFinish" [ Int 0L ]);
  invalid "a buffer for a queue" (fun () -> call "clFinish" [ Obj b ]);
  invalid "a Float for an integer" (fun () -> call "clGetDeviceInfo" [ Obj device; Float 1.; Int 4L; Memory units; Null ]);
  invalid "memory smaller than the command reaches" (fun () ->
      call "clGetDeviceInfo" [ Obj device; Int 0x1002L; Int 8L; Memory units; Null ]);
  invalid "memory where the size is not known" (fun () ->
      call "clCreateImage" [ Obj context; Int 1L; Null; Null; Memory units; Null ]);
  invalid "a String for a void pointer" (fun () ->
      call "clGetDeviceInfo" [ Obj device; Int 0x1002L; Int 4L; String "four"; Null ]);
  invalid "a String with a NUL" (fun () -> call "clCreateKernel" [ Obj p; String "sa\000xpy"; Null ]);
  invalid "Out for an array" (fun () ->
      call "clWaitForEvents" [ Int 1L; Out (ref Null) ]);
  invalid "a callback" (fun () -> call "clSetEventCallback" [ Obj gate; Int 0L; Address 1n; Null ]);
  let says f expect =
    match f () with
    | _ -> fail "no Invalid_argument (%s)" expect
    | exception Invalid_argument m -> ok (m = expect) "says %s" m
  in
  says
    (fun () -> call "clGetDeviceInfo" [ Obj device; Int 0x1002L; Int 8L; Memory units; Null ])
    "Clgc.Generic.call: argument 4 (void * param_value): the Bigarray holds 4 bytes, the command reaches 8";
  says
    (fun () -> call "clFinish" [ Int 0L ])
    "Clgc.Generic.call: argument 1 (cl_command_queue command_queue) takes an Obj of its kind, Null or an Address";
  says (fun () -> call "clFinish" [ Obj b ]) "Clgc.Generic.call: a mem where a command_queue was expected";
  invalid "an unchecked event where the binding must keep the memory" (fun () ->
      call "clEnqueueReadBuffer" [ Obj q; Obj b; Int 0L; Int 0L; Int 4L; Memory units; Int 0L; Null; Address 0n ]);
  invalid "obj of another kind" (fun () -> obj Queue (Obj b));
  invalid "obj of no object" (fun () -> obj Mem (Int 0L));
  Clgc.release b;
  ignore (raises_cl "CL_INVALID_MEM_OBJECT" (fun () -> call "clRetainMemObject" [ Obj b ]));
  (* An error is a result here. *)
  ok (call "clGetDeviceInfo" [ Obj device; Int 0x7fffL; Int 4L; Memory units; Null ] = Int (-30L)) "CL_INVALID_VALUE as a result";
  pass "generic misuse";
  Clgc.finish q
