(* What a careless or hostile program does: each ends in an OCaml
   exception or a right answer, never a crash. *)

open Check_lib.Check

let () =
  let _, device, context = pocl () in
  let n = 256 in
  let q, k, by = saxpy context device n in

  (* Sizes. *)
  invalid "negative global size" (fun () -> Clgc.launch q k [| -1 |]);
  invalid "four dimensions" (fun () -> Clgc.launch q k [| 1; 1; 1; 1 |]);
  invalid "negative buffer" (fun () -> Clgc.buffer context (-1));
  invalid "negative offset" (fun () -> Clgc.read ~offset:(-4) q by (floats 4 float_of_int));
  invalid "no local memory" (fun () -> Clgc.set_arg k 1 (Clgc.Local 0));
  ignore (raises_cl "CL_INVALID_BUFFER_SIZE" (fun () -> Clgc.buffer context 0));
  cl_error "a buffer of max_int bytes" (fun () -> Clgc.buffer context max_int);
  ignore
    (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.read q by (floats (n + 1) float_of_int)));
  ignore
    (raises_cl "CL_INVALID_VALUE" (fun () ->
         Clgc.write ~offset:(4 * n) q by (floats 1 float_of_int)));
  ignore (raises_cl "CL_INVALID_ARG_SIZE" (fun () -> Clgc.set_arg k 0 (Clgc.Raw (Bytes.create 3))));
  invalid "a local size of 0" (fun () -> Clgc.launch ~local:[| 0 |] q k [| n |]);
  pass "sizes and kinds";

  (* Kernel arguments (issue 45): each was a crash, now an exception or a
     launch that computes; the library's argument table checks and holds
     them (clgc/binding.h). *)
  let p = Clgc.program context saxpy_source in
  Clgc.build p;
  let k2 = Clgc.kernel p "saxpy" in
  let message f =
    match f () with
    | _ -> fail "no Invalid_argument"
    | exception Invalid_argument m -> m
  in
  let m = message (fun () -> Clgc.set_arg k2 1 (Clgc.Int64 12345L)) in
  let contains s sub =
    let n = String.length sub in
    let rec at i = i + n <= String.length s && (String.sub s i n = sub || at (i + 1)) in
    at 0
  in
  ok
    (contains m "argument 1 (x) of kernel saxpy is a __global")
    "an Int64 for a __global pointer names the argument: %s" m;
  invalid "8 bytes for a __global pointer" (fun () ->
      Clgc.set_arg k2 2 (Clgc.Raw (Bytes.create 8)));
  invalid "local memory for a __global pointer" (fun () -> Clgc.set_arg k2 1 (Clgc.Local 16));
  invalid "a buffer for a float" (fun () -> Clgc.set_arg k2 0 (Clgc.Mem by));
  ignore (raises_cl "CL_INVALID_ARG_SIZE" (fun () -> Clgc.set_arg k2 0 (Clgc.Float64 2.)));
  Clgc.set_arg k2 0 (Clgc.Float32 2.);
  ignore (raises_cl "CL_INVALID_KERNEL_ARGS" (fun () -> Clgc.launch q k2 [| n |]));
  (* A buffer released by hand while it is an argument: held by the
     kernel (was a use after free under valgrind). *)
  let x = Clgc.buffer_of ~copy:true context (floats n float_of_int) in
  let y = Clgc.buffer_of ~copy:true context (floats n (fun _ -> 10.)) in
  Clgc.set_args k2 [ Clgc.Float32 2.; Clgc.Mem x; Clgc.Mem y ];
  Clgc.release x;
  Gc.full_major ();
  Clgc.wait [ Clgc.launch q k2 [| n |] ];
  let out = floats n (fun _ -> 0.) in
  Clgc.wait [ Clgc.read q y out ];
  ok (out.{3} = 16.) "a released buffer argument still computes: %g" out.{3};
  (* More local memory than the device has (was an abort in PoCL). *)
  let pl = Clgc.program context "__kernel void f(__local float *t, __global float *o) { t[0] = 1; o[0] = t[0]; }" in
  Clgc.build pl;
  let kl = Clgc.kernel pl "f" in
  ignore
    (raises_cl "CL_INVALID_ARG_SIZE" (fun () ->
         Clgc.set_arg kl 0 (Clgc.Local (Clgc.int_info device "local-mem-size" + 1))));
  (* Strings with a NUL inside: refused, not cut short. *)
  invalid "a kernel name with a NUL" (fun () -> Clgc.kernel p "saxpy\000x");
  invalid "build options with a NUL" (fun () -> Clgc.build ~options:"-DX=1\000 -DY" p);
  invalid "an info query with a NUL" (fun () -> Clgc.info device "name\000x");
  pass "kernel arguments and strings";

  (* A stub that raised on a thread that then exits: what it held is let
     go with the thread, so a release later reaches OpenCL (it never did:
     the thread's list kept the buffer busy for good). Seen through the
     context's reference count, which the buffer held. *)
  let c2 = Clgc.context [| device |] in
  let q2 = Clgc.queue c2 device in
  let b2 = Clgc.buffer c2 64 in
  let refs () = Clgc.int_info c2 "reference-count" in
  let before = refs () in
  Thread.join
    (thread
       (fun () -> invalid "a negative offset" (fun () -> Clgc.read ~offset:(-4) q2 b2 (floats 4 float_of_int)))
       ());
  Clgc.release b2;
  (* The thread's holds go in its exit's last steps, which may come after
     the join: each stub does the releases deferred meanwhile. A bound on
     the looks (60 s of them), not a time. *)
  let looks = ref 0 in
  while refs () <> before - 1 && !looks < 60000 do
    incr looks;
    Thread.delay 0.001
  done;
  ok (refs () = before - 1) "the buffer's release reached OpenCL: %d references, %d before" (refs ()) before;
  Clgc.release q2;
  pass "a thread that raised and exited holds nothing";

  (* Ports dropped with a post still to complete: closed once it has (they
     kept their fds for good: 100 ports, 100 fds). *)
  let fds () = Array.length (Sys.readdir "/proc/self/fd") in
  let before = fds () in
  let gate = Clgc.user_event context in
  for i = 1 to 100 do
    Clgc.post (Clgc.port ()) gate i
  done;
  Gc.full_major ();
  Clgc.set_complete gate;
  Clgc.finish q;
  Gc.full_major ();
  ignore (Clgc.released gate);
  ok (fds () <= before + 4) "dropped ports closed: %d fds, %d before" (fds ()) before;
  pass "dropped ports with posts pending";

  (* A drain that took completions returns them, a callback's failure
     meanwhile notwithstanding; the next drain raises it. *)
  let port = Clgc.port () in
  let gate = Clgc.user_event context in
  Clgc.post port gate 7;
  Clgc.on_status gate (fun _ -> raise Exit);
  Clgc.set_complete gate;
  let rec drain acc tries =
    if acc <> [] || tries = 0 then acc
    else begin
      Thread.delay 0.001;
      match Clgc.drain port with
      | a -> drain (Array.to_list a) (tries - 1)
      | exception Clgc.Callback_failed _ -> fail "the completion was lost to the failure"
    end
  in
  ok (drain [] 100000 = [ (7, Clgc.Complete) ]) "the drain returned the completion";
  (match Clgc.drain port with
   | _ -> ( match Clgc.wait [ gate ] with
          | () -> fail "the callback's failure was never raised"
          | exception Clgc.Callback_failed _ -> ())
   | exception Clgc.Callback_failed _ -> ());
  Clgc.close_port port;
  pass "a drain keeps its completions"; 

  (* Released objects, twice, and in every use. *)
  let e = Clgc.user_event context in
  Clgc.release e;
  Clgc.release e;
  ignore (raises_cl "CL_INVALID_EVENT" (fun () -> Clgc.wait [ e ]));
  ignore (raises_cl "CL_INVALID_EVENT" (fun () -> Clgc.set_complete e));
  ignore (raises_cl "CL_INVALID_EVENT" (fun () -> Clgc.launch ~wait:[ e ] q k [| n |]));
  ignore (raises_cl "CL_INVALID_EVENT" (fun () -> Clgc.info e "command-type"));
  let q2 = Clgc.queue context device in
  Clgc.release q2;
  ignore (raises_cl "CL_INVALID_COMMAND_QUEUE" (fun () -> Clgc.finish q2));
  pass "released objects";

  (* Released while another thread's call uses it: raced 20 times. The
     waiter's wait either ends right (the release waited for it) or, if
     the release came first, raises CL_INVALID_EVENT; never a crash. *)
  let inside = ref 0 and before = ref 0 in
  for _ = 1 to 20 do
    let gate = Clgc.user_event context in
    let ev = Clgc.launch ~wait:[ gate ] q k [| n |] in
    Clgc.flush q;
    let started = ref false in
    let waiter =
      thread
        (fun () ->
          started := true;
          match Clgc.wait [ ev ] with
          | () -> incr inside
          | exception Clgc.Error { name = "CL_INVALID_EVENT"; _ } -> incr before)
        ()
    in
    while not !started do Thread.delay 0.001 done;
    Thread.delay 0.001;
    Clgc.release ev;
    ok (Clgc.released ev) "released, as far as OCaml sees";
    Clgc.set_complete gate;
    Thread.join waiter;
    ignore (raises_cl "CL_INVALID_EVENT" (fun () -> Clgc.status ev))
  done;
  Clgc.finish q;
  ok (!inside + !before = 20) "every waiter ended";
  Printf.printf "waits the release waited for: %d of 20\n" !inside;
  pass "release while another thread waits";

  (* Binaries (issue 45): a byte, a real binary cut short (PoCL asserts on
     one, aborting the process), none, an empty one: each an exception. *)
  let p = Clgc.program context saxpy_source in
  Clgc.build p;
  let dev, bin = (Clgc.binaries p).(0) in
  let from b = Clgc.program_of_binaries context [ (dev, b) ] in
  List.iter
    (fun cut ->
      cl_error (Printf.sprintf "a binary cut at %d bytes" cut) (fun () ->
          Clgc.build (from (String.sub bin 0 cut))))
    [ 1; 64; 1000; String.length bin / 2 ];
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> from ""));
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.program_of_binaries context []));
  Clgc.build (from bin);
  pass "binaries cut short";

  (* Regions and patterns out of bounds. *)
  let b = Clgc.buffer context 64 in
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.sub_buffer b ~origin:0 ~size:128));
  invalid "a negative sub-buffer" (fun () -> Clgc.sub_buffer b ~origin:(-1) ~size:4);
  invalid "an empty pattern" (fun () -> Clgc.fill q b "");
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.fill ~size:128 q b "\000\000\000\000"));
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.copy ~size:128 q ~src:b ~dst:b));
  cl_error "an argument index past the last" (fun () -> Clgc.arg_info k2 9 "name");
  pass "regions and patterns";

  (* Callbacks that release their own event and run the collector on
     PoCL's thread: the releases wait for a thread of the program's. *)
  let gate = Clgc.user_event context in
  let count = 200 in
  let fired = ref 0 in
  let first = Clgc.launch ~wait:[ gate ] q k [| n |] in
  for i = 0 to count - 1 do
    let ev = if i = 0 then first else Clgc.launch q k [| n |] in
    Clgc.on_status ev (fun _ ->
        Clgc.release ev;
        if i mod 50 = 0 then Gc.full_major ();
        incr fired)
  done;
  Clgc.set_complete gate;
  Clgc.finish q;
  while !fired < count do Thread.delay 0.001 done;
  Gc.full_major ();
  ignore (Clgc.status (Clgc.user_event context));
  pass "callbacks release their events";

  (* A thread that registered a callback exits before it runs. *)
  let gate = Clgc.user_event context in
  let ran = ref false in
  let ev = Clgc.launch ~wait:[ gate ] q k [| n |] in
  Thread.join (thread (fun () -> Clgc.on_status ev (fun _ -> ran := true)) ());
  Clgc.set_complete gate;
  Clgc.wait [ ev ];
  while not !ran do Thread.delay 0.001 done;
  pass "the registering thread exited";

  (* A port closed while an event posted to it is pending. *)
  let port = Clgc.port () in
  let gate = Clgc.user_event context in
  Clgc.post port gate 1;
  invalid "closing a busy port" (fun () -> Clgc.close_port port);
  Clgc.set_complete gate;
  let rec drain acc =
    if acc <> [] then acc
    else begin
      Thread.delay 0.001;
      drain (Array.to_list (Clgc.drain port))
    end
  in
  ok (drain [] = [ (1, Clgc.Complete) ]) "the port delivered the tag";
  Clgc.close_port port;
  Clgc.close_port port;
  invalid "a closed port" (fun () -> Clgc.post port gate 2);
  pass "ports";

  (* Thousands of objects made and dropped under compaction. *)
  for i = 1 to 3000 do
    let b = Clgc.buffer_of context (floats 64 float_of_int) in
    let e = Clgc.write ~blocking:false q b (floats 64 float_of_int) in
    if i mod 500 = 0 then Gc.compact ();
    ignore e
  done;
  Clgc.finish q;
  Gc.compact ();
  pass "objects dropped under compaction"
