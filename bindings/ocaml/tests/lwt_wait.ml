(* Clgc_lwt: an Lwt thread keeps ticking while another awaits a kernel.
   The kernel is gated by a user event the ticker opens after ten ticks,
   so the wait ends only if the ticker ran during it. *)

open Check_lib.Check

let () =
  let _, device, context = pocl () in
  let n = 1024 in
  let q, k, _ = saxpy context device n in

  let gate = Clgc.user_event context in
  let ev = Clgc.launch ~wait:[ gate ] q k [| n |] in
  Clgc.flush q;
  let ticks = ref 0 and resolved = ref false in
  let rec ticker () =
    if !resolved then Lwt.return_unit
    else begin
      incr ticks;
      if !ticks = 10 then Clgc.set_complete gate;
      Lwt.bind (Lwt_unix.sleep 0.001) ticker
    end
  in
  Lwt_main.run
    (Lwt.join
       [ ticker (); Lwt.map (fun () -> resolved := true) (Clgc_lwt.wait ev) ]);
  ok (!ticks >= 10) "ticks during the wait: %d" !ticks;
  ok (Clgc.status ev = Clgc.Complete) "complete";
  pass "Clgc_lwt.wait lets other Lwt threads run";

  (* A failed command rejects its promise. *)
  let gate = Clgc.user_event context in
  let ev = Clgc.launch ~wait:[ gate ] q k [| n |] in
  Clgc.set_failed gate (-7);
  (match Lwt_main.run (Clgc_lwt.wait ev) with
  | () -> fail "a failed command's wait was fulfilled"
  | exception Clgc.Error e ->
      ok (e.name = "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST") "rejected with %s" e.name);
  pass "a failed command rejects";

  (* A thousand waits at once, each resolved once. *)
  let gate = Clgc.user_event context in
  let first = Clgc.launch ~wait:[ gate ] q k [| n |] in
  let events = first :: List.init 999 (fun _ -> Clgc.launch q k [| n |]) in
  let resolved = ref 0 in
  let waits = List.map (fun e -> Lwt.map (fun () -> incr resolved) (Clgc_lwt.wait e)) events in
  Clgc.set_complete gate;
  Lwt_main.run (Lwt.join waits);
  ok (!resolved = 1000) "resolved %d of 1000" !resolved;
  pass "1000 waits at once";

  (* Cancelled: the promise is rejected at once, the command runs on and
     its completion finds no waiter; the port serves the next waits. *)
  let gate = Clgc.user_event context in
  let ev = Clgc.launch ~wait:[ gate ] q k [| n |] in
  let dst = floats n (fun _ -> -1.) in
  let src = Clgc.buffer_of ~copy:true context (floats n float_of_int) in
  let rd = Clgc.read ~blocking:false ~wait:[ ev ] q src dst in
  let w = Clgc_lwt.wait rd in
  Lwt.cancel w;
  ok (Lwt.state w = Lwt.Fail Lwt.Canceled) "a cancelled wait is rejected with Canceled";
  Gc.full_major ();
  Clgc.set_complete gate;
  Lwt_main.run (Clgc_lwt.wait ev);
  Clgc.wait [ rd ];
  ok (Clgc.status rd = Clgc.Complete) "the cancelled wait's command ran on";
  ok (dst.{1} = 1.) "into its Bigarray";
  Lwt_main.run (Clgc_lwt.wait (Clgc.launch q k [| n |]));
  pass "a cancelled wait detaches";

  (* A released event: a rejected promise, not an exception at the call. *)
  let e = Clgc.user_event context in
  Clgc.release e;
  let p = Clgc_lwt.wait e in
  (match Lwt.state p with
  | Lwt.Fail (Clgc.Error _) -> ()
  | Lwt.Fail x -> fail "a released event's wait: %s" (Printexc.to_string x)
  | _ -> fail "a released event's wait was not rejected");
  pass "a released event rejects";
  Clgc.finish q
