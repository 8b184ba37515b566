(* Other work keeps running while a program builds and a kernel of about
   400 ms runs through clgc: the patterns of docs/ocaml.md, and the
   measurement of docs/performance.md ("The OCaml binding").

   ticker.exe [threads|lwt] [RUNS]: each run prints the ticks of a 10 ms
   ticker during the kernel against the ideal (the kernel's time / 10 ms);
   the last line is the median of the runs. threads: a systhread ticks
   while the main thread builds and waits in Clgc.wait; lwt: an Lwt
   thread ticks while another awaits Clgc_lwt.wait. *)

let spin_source =
  {|__kernel void spin(__global float *out, uint n) {
      float x = (float)get_global_id(0);
      for (uint i = 0; i < n; i++) x = x * 0.999f + 1.0f;
      out[get_global_id(0)] = x;
    }|}

let () =
  let mode = if Array.length Sys.argv > 1 then Sys.argv.(1) else "threads" in
  let runs = if Array.length Sys.argv > 2 then int_of_string Sys.argv.(2) else 5 in
  let device = Saxpy.pocl_device () in
  let context = Clgc.context [| device |] in
  let queue = Clgc.queue context device in
  let program = Clgc.program context spin_source in
  Clgc.build program;
  let kernel = Clgc.kernel program "spin" in
  let out = Clgc.buffer context (4 * 64) in
  let launch iters =
    Clgc.set_args kernel [ Clgc.Mem out; Clgc.Int32 (Int32.of_int iters) ];
    Clgc.launch queue kernel [| 64 |]
  in
  let run iters =
    let t0 = Unix.gettimeofday () in
    Clgc.wait [ launch iters ];
    Unix.gettimeofday () -. t0
  in
  (* Iterations for about 400 ms. *)
  let rec calibrate iters =
    let t = run iters in
    if t >= 0.1 then int_of_float (float_of_int iters *. 0.4 /. t) else calibrate (iters * 4)
  in
  let iters = calibrate 1000 in
  let build () =
    let p = Clgc.program context (spin_source ^ "\n") in
    Clgc.build ~options:"-cl-opt-disable" p;
    Clgc.release p
  in
  (* A systhread ticks while this one builds and waits. *)
  let with_threads () =
    let ticks = ref 0 and stop = ref false in
    let ticker =
      Thread.create
        (fun () ->
          while not !stop do
            Thread.delay 0.01;
            incr ticks
          done)
        ()
    in
    build ();
    ticks := 0;
    let t = run iters in
    let got = !ticks in
    stop := true;
    Thread.join ticker;
    float_of_int got /. (t /. 0.01)
  in
  (* An Lwt thread ticks while another awaits the kernel. *)
  let with_lwt () =
    build ();
    let ticks = ref 0 and stop = ref false in
    let rec tick () =
      if !stop then Lwt.return_unit
      else Lwt.bind (Lwt_unix.sleep 0.01) (fun () -> incr ticks; tick ())
    in
    let t0 = Unix.gettimeofday () in
    let kernel =
      Lwt.map (fun () -> stop := true) (Clgc_lwt.wait (launch iters))
    in
    Lwt_main.run (Lwt.join [ tick (); kernel ]);
    float_of_int !ticks /. ((Unix.gettimeofday () -. t0) /. 0.01)
  in
  let ratio = if mode = "lwt" then with_lwt else with_threads in
  let ratios = List.init runs (fun _ -> ratio ()) in
  List.iter (Printf.printf "ticks of the ideal: %.3f\n") ratios;
  let sorted = List.sort compare ratios in
  Printf.printf "%s median: %.3f of the ideal ticks, over %d runs\n" mode
    (List.nth sorted (runs / 2)) runs
