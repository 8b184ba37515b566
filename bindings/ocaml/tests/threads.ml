(* Other threads run, and the collector collects, while a thread waits
   for a kernel through clgc; through a plain external that keeps the
   runtime lock, neither happens. The kernel is gated by a user event that
   the ticker opens once it has seen what the test needs, so nothing here
   counts on how long anything takes. *)

open Check_lib.Check

external raw_gated_wait : Clgc.event -> Clgc.event -> int -> unit = "test_raw_gated_wait"

let () =
  let _, device, context = pocl () in
  let n = 1024 in
  let q, k, _ = saxpy context device n in

  (* clgc: the ticker ticks and a full major collection completes while
     the main thread waits; the ticker opens the gate after both. *)
  let gate = Clgc.user_event context in
  let ev = Clgc.launch ~wait:[ gate ] q k [| n |] in
  let ticks = ref 0 and collected = ref false and opened = ref false in
  let waiting = ref false and stop = ref false in
  let collector =
    thread
      (fun () ->
        while not !waiting do Thread.delay 0.001 done;
        Gc.full_major ();
        collected := true)
      ()
  in
  let ticker =
    thread
      (fun () ->
        while not !stop do
          if !waiting then incr ticks;
          if !ticks >= 10 && !collected && not !opened then begin
            opened := true;
            Clgc.set_complete gate
          end;
          Thread.delay 0.001
        done)
      ()
  in
  waiting := true;
  Clgc.wait [ ev ];
  let during = !ticks in
  stop := true;
  Thread.join ticker;
  Thread.join collector;
  ok !opened "the ticker opened the gate";
  ok (during >= 10) "ticks during the wait: %d" during;
  ok !collected "a full major collection during the wait";
  pass "clgc's wait lets other threads run";

  (* A build lets them run too: the ticker counts while the main thread
     builds (a build's length is PoCL's, so only what ran is checked). *)
  stop := false;
  ticks := 0;
  let building = ref true in
  let ticker =
    thread
      (fun () ->
        while !building do
          incr ticks;
          Thread.delay 0.001
        done)
      ()
  in
  let p2 = Clgc.program context (saxpy_source ^ "\n// another build") in
  Clgc.build ~options:"-cl-opt-disable" p2;
  building := false;
  Thread.join ticker;
  Printf.printf "ticks during a build: %d\n" !ticks;

  (* The contrast: the same gated kernel through an external that keeps the
     lock; a C thread opens the gate. No tick, no collection meanwhile. *)
  let gate = Clgc.user_event context in
  let ev = Clgc.launch ~wait:[ gate ] q k [| n |] in
  Clgc.flush q;
  let ticks = ref 0 and stop = ref false in
  let majors () = (Gc.quick_stat ()).Gc.major_collections in
  let ticker =
    thread
      (fun () ->
        while not !stop do
          incr ticks;
          Thread.delay 0.001
        done)
      ()
  in
  let collector =
    thread
      (fun () ->
        while not !stop do
          Gc.full_major ();
          Thread.delay 0.001
        done)
      ()
  in
  (* Until the ticker has ticked, whatever the machine's load. *)
  while !ticks = 0 do Thread.delay 0.001 done;
  let t0 = !ticks and m0 = majors () in
  raw_gated_wait ev gate 200;
  let t1 = !ticks and m1 = majors () in
  stop := true;
  Thread.join ticker;
  Thread.join collector;
  ok (t0 > 0) "the ticker ran before";
  ok (t1 = t0) "no tick while the lock was kept: %d" (t1 - t0);
  ok (m1 = m0) "no collection while the lock was kept: %d" (m1 - m0);
  pass "a plain external stops them";
  Clgc.finish q
