(* A thread keeps ticking while another builds a program and waits for a
   kernel of about 400 ms through clgc: the pattern of docs/ocaml.md, and
   the measurement of docs/performance.md ("The OCaml binding").

   ticker.exe [RUNS]: each run prints the ticks of a 10 ms ticker during
   the kernel against the ideal (the kernel's time / 10 ms); the last line
   is the median of the runs. *)

let spin_source =
  {|__kernel void spin(__global float *out, uint n) {
      float x = (float)get_global_id(0);
      for (uint i = 0; i < n; i++) x = x * 0.999f + 1.0f;
      out[get_global_id(0)] = x;
    }|}

let () =
  let runs = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 5 in
  let platform =
    List.find
      (fun p -> Clgc.string_info p "name" = "Portable Computing Language")
      (Array.to_list (Clgc.platforms ()))
  in
  let device = (Clgc.devices platform).(0) in
  let context = Clgc.context [| device |] in
  let queue = Clgc.queue context device in
  let program = Clgc.program context spin_source in
  Clgc.build program;
  let kernel = Clgc.kernel program "spin" in
  let out = Clgc.buffer context (4 * 64) in
  let run iters =
    Clgc.set_args kernel [ Clgc.Mem out; Clgc.Int32 (Int32.of_int iters) ];
    let t0 = Unix.gettimeofday () in
    Clgc.wait [ Clgc.launch queue kernel [| 64 |] ];
    Unix.gettimeofday () -. t0
  in
  (* Iterations for about 400 ms. *)
  let rec calibrate iters =
    let t = run iters in
    if t >= 0.1 then int_of_float (float_of_int iters *. 0.4 /. t) else calibrate (iters * 4)
  in
  let iters = calibrate 1000 in
  let ratio () =
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
    (* The other thread builds a program and runs the kernel. *)
    let p = Clgc.program context (spin_source ^ "\n") in
    Clgc.build ~options:"-cl-opt-disable" p;
    Clgc.release p;
    ticks := 0;
    let t = run iters in
    let got = !ticks in
    stop := true;
    Thread.join ticker;
    float_of_int got /. (t /. 0.01)
  in
  let ratios = List.init runs (fun _ -> ratio ()) in
  List.iter (Printf.printf "ticks of the ideal: %.3f\n") ratios;
  let sorted = List.sort compare ratios in
  Printf.printf "median: %.3f of the ideal ticks, over %d runs\n" (List.nth sorted (runs / 2)) runs
