(* Event callbacks: OCaml closures on PoCL's threads, holding the runtime
   lock; allocating, surviving compaction storms, each run exactly once;
   what they raise reaches the next wait. *)

open Check_lib.Check

let () =
  let _, device, context = pocl () in
  let q = Clgc.queue context device in
  let p = Clgc.program context "__kernel void one(__global int *a) { a[get_global_id(0)] += 1; }" in
  Clgc.build p;
  let k = Clgc.kernel p "one" in
  let b = Clgc.buffer context 4096 in
  Clgc.set_args k [ Clgc.Mem b ];

  (* One callback on PoCL's thread: not the main thread, an OCaml thread
     all the same, and it allocates. *)
  let main = Thread.id (Thread.self ()) in
  let seen = ref None in
  let gate = Clgc.user_event context in
  let ev = Clgc.launch ~wait:[ gate ] q k [| 1 |] in
  Clgc.on_status ev (fun s ->
      let l = List.init 1000 (fun i -> string_of_int i) in
      seen := Some (Thread.id (Thread.self ()), s, List.length l));
  Clgc.flush q;
  Clgc.set_complete gate;
  Clgc.wait [ ev ];
  while !seen = None do Thread.delay 0.001 done;
  (match !seen with
  | Some (id, Clgc.Complete, 1000) -> ok (id <> main) "ran on PoCL's thread (%d)" id
  | _ -> fail "the callback saw something else");
  pass "a callback on PoCL's thread";

  (* 10,000 callbacks, each run once, while the main thread compacts. *)
  let total = 10_000 in
  let runs = Array.make total 0 and done_ = ref 0 in
  let gate = Clgc.user_event context in
  let first = Clgc.launch ~wait:[ gate ] q k [| 1 |] in
  let events = ref [ first ] in
  for i = 0 to total - 1 do
    let ev = if i = 0 then first else Clgc.launch q k [| 1 |] in
    if i > 0 then events := ev :: !events;
    Clgc.on_status ev (fun _ ->
        runs.(i) <- runs.(i) + 1;
        ignore (Sys.opaque_identity (Array.make 16 i));
        incr done_)
  done;
  Clgc.flush q;
  Clgc.set_complete gate;
  let compactions = ref 0 in
  while !done_ < total do
    Gc.compact ();
    incr compactions;
    (* Thread.yield need not let another thread run in OCaml 4.13: a
       sleep now and then makes sure the callbacks do. *)
    if !compactions mod 8 = 0 then Thread.delay 0.001 else Thread.yield ()
  done;
  Clgc.wait !events;
  Array.iteri (fun i n -> ok (n = 1) "callback %d ran %d times" i n) runs;
  Printf.printf "%d callbacks during %d compactions\n" total !compactions;
  pass "10,000 callbacks, once each";

  (* Queries of the events whose callbacks are running: PoCL holds an
     event's lock while it calls back, and the callback waits for the
     runtime lock, so a query made with the runtime lock held would
     deadlock. Every call lets it go. *)
  let gate = Clgc.user_event context in
  let first = Clgc.launch ~wait:[ gate ] q k [| 1 |] in
  let events = Array.init 500 (fun i -> if i = 0 then first else Clgc.launch q k [| 1 |]) in
  let fired = ref 0 in
  Array.iter (fun ev -> Clgc.on_status ev (fun _ -> incr fired)) events;
  let queries = ref 0 in
  let query () = Array.iter (fun ev -> ignore (Clgc.status ev); incr queries) events in
  Clgc.set_complete gate;
  Clgc.flush q;
  query ();
  while !fired < Array.length events do query () done;
  Printf.printf "%d queries while %d callbacks ran\n" !queries !fired;
  pass "queries while callbacks run";

  (* A build's notification: once, with the build done; a failed build's
     too; what one raises reaches the next finish. *)
  let notes = ref 0 and status = ref "" in
  let p2 = Clgc.program context "__kernel void two(__global int *a) { a[0] = 2; }" in
  Clgc.build p2 ~notify:(fun () ->
      incr notes;
      status :=
        match Clgc.build_info p2 device "build-status" with Clgc.Enum s -> s | _ -> "?");
  while !notes = 0 do Thread.delay 0.001 done;
  ok (!notes = 1) "notified %d times" !notes;
  ok (!status = "CL_BUILD_SUCCESS") "status in the notification: %s" !status;
  let failed = ref 0 in
  let bad = Clgc.program context "__kernel void k() { nope(); }" in
  (match Clgc.build bad ~notify:(fun () -> incr failed) with
  | () -> while !failed = 0 do Thread.delay 0.001 done
  | exception Clgc.Error e -> ok (e.name = "CL_BUILD_PROGRAM_FAILURE") "%s" e.name);
  let p3 = Clgc.program context "__kernel void three(__global int *a) { a[0] = 3; }" in
  Clgc.build p3 ~notify:(fun () -> failwith "from a build notification");
  (match Clgc.finish q with
  | () -> fail "the notification's exception was lost"
  | exception Clgc.Callback_failed (Failure m) ->
      ok (m = "from a build notification") "message %s" m);
  pass "build notifications";

  (* What a callback raises reaches the next wait. *)
  let gate = Clgc.user_event context in
  let ev = Clgc.launch ~wait:[ gate ] q k [| 1 |] in
  Clgc.on_status ev (fun _ -> failwith "from a callback");
  Clgc.set_complete gate;
  (match Clgc.wait [ ev ] with
  | () ->
      (* It may have run after the wait's own end: the next one raises. *)
      (match Clgc.finish q with
      | () -> fail "the callback's exception was lost"
      | exception Clgc.Callback_failed (Failure m) -> ok (m = "from a callback") "message %s" m)
  | exception Clgc.Callback_failed (Failure m) -> ok (m = "from a callback") "message %s" m);
  pass "an exception in a callback";

  (* Destructor callbacks: once OpenCL destroys the object, not before. *)
  let destroyed () =
    let n = ref 0 in
    (n, fun () -> incr n)
  in
  let until n = while !n = 0 do Thread.yield (); ignore (Clgc.status gate) done in
  let n, f = destroyed () in
  let b = Clgc.buffer context 64 in
  Clgc.on_release b f;
  ok (!n = 0) "not before the release";
  Clgc.release b;
  until n;
  ok (!n = 1) "a released buffer's, once";
  (* Dropped: the collector's release, done by a later call. *)
  let n, f = destroyed () in
  Clgc.on_release (Clgc.buffer context 64) f;
  Gc.full_major ();
  until n;
  (* A sub-buffer keeps its parent, a mapping its buffer. *)
  let n, f = destroyed () in
  let parent = Clgc.buffer context 256 in
  Clgc.on_release parent f;
  let sub = Clgc.sub_buffer parent ~origin:0 ~size:64 in
  let m = Clgc.map q parent Bigarray.char in
  Clgc.release parent;
  Clgc.finish q;
  ok (!n = 0) "the parent of a sub-buffer, mapped, lives";
  Clgc.wait [ Clgc.unmap q m ];
  Clgc.release sub;
  Clgc.finish q;
  ok (!n = 0) "while the Bigarray of its mapping lives";
  ignore (Sys.opaque_identity m);
  Gc.full_major ();
  Clgc.wait [ Clgc.unmap q (Clgc.map q (Clgc.buffer context 4) Bigarray.char) ];
  until n;
  (* A context's (OpenCL 3.0), and an image's. *)
  let n, f = destroyed () in
  let c = Clgc.context [| device |] in
  Clgc.on_release c f;
  let img = Clgc.image c { Clgc.order = "r"; channel = "float" } [| 4 |] in
  let n2, f2 = destroyed () in
  Clgc.on_release img f2;
  Clgc.release c;
  Clgc.finish q;
  ok (!n = 0) "a context lives while its image does";
  Clgc.release img;
  until n2;
  until n;
  (* What one raises reaches the next wait. *)
  let b = Clgc.buffer context 64 in
  Clgc.on_release b (fun () -> failwith "from a destructor");
  Clgc.release b;
  let rec raised () =
    match Clgc.finish q with
    | () -> Thread.yield (); raised ()
    | exception Clgc.Callback_failed (Failure m) -> ok (m = "from a destructor") "message %s" m
  in
  raised ();
  let b = Clgc.buffer context 64 in
  Clgc.release b;
  ignore (raises_cl "CL_INVALID_MEM_OBJECT" (fun () -> Clgc.on_release b ignore));
  pass "destructor callbacks"
