(* The OCaml binding against C through clgc, in one process
   (docs/performance.md, "The OCaml binding"):

   bench.exe [SAMPLES]: a saxpy's launch + wait from OCaml (Clgc.launch,
   Clgc.wait) against the same from C through clgc, medians of SAMPLES
   alternating samples; and a wrapper's cost per call: the event status
   query raw from C, through clgc's wrapper from C, and Clgc.status from
   OCaml. *)

external c_launch_wait : Clgc.queue -> Clgc.kernel -> int -> float = "bench_c_launch_wait"
external c_status_calls : Clgc.event -> bool -> int -> float = "bench_c_status_calls"

let median l =
  let a = Array.of_list l in
  Array.sort compare a;
  a.(Array.length a / 2)

let () =
  let samples = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 201 in
  let platform =
    List.find
      (fun p -> Clgc.string_info p "name" = "Portable Computing Language")
      (Array.to_list (Clgc.platforms ()))
  in
  let device = (Clgc.devices platform).(0) in
  let context = Clgc.context [| device |] in
  let queue = Clgc.queue context device in
  let program =
    Clgc.program context
      {|__kernel void saxpy(float a, __global const float *x, __global float *y) {
          size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }|}
  in
  Clgc.build program;
  let kernel = Clgc.kernel program "saxpy" in
  let n = 4096 in
  let x = Clgc.buffer context (4 * n) and y = Clgc.buffer context (4 * n) in
  Clgc.set_args kernel [ Clgc.Float32 2.; Clgc.Mem x; Clgc.Mem y ];
  let ocaml () =
    let t0 = Unix.gettimeofday () in
    let ev = Clgc.launch queue kernel [| n |] in
    Clgc.wait [ ev ];
    Clgc.release ev;
    (Unix.gettimeofday () -. t0) *. 1e9
  in
  for _ = 1 to 50 do
    ignore (ocaml ());
    ignore (c_launch_wait queue kernel n)
  done;
  let o = ref [] and c = ref [] in
  for _ = 1 to samples do
    o := ocaml () :: !o;
    c := c_launch_wait queue kernel n :: !c
  done;
  let mo = median !o and mc = median !c in
  Printf.printf "saxpy %d, launch + wait, median of %d: C through clgc %.1f us, OCaml %.1f us, %.3fx\n"
    n samples (mc /. 1e3) (mo /. 1e3) (mo /. mc);
  let ev = Clgc.launch queue kernel [| n |] in
  Clgc.wait [ ev ];
  let calls = 200_000 in
  let per_call f =
    median
      (List.init 7 (fun _ ->
           let t0 = Unix.gettimeofday () in
           f ();
           (Unix.gettimeofday () -. t0) *. 1e9 /. float_of_int calls))
  in
  let raw = median (List.init 7 (fun _ -> c_status_calls ev true calls)) in
  let wrapped = median (List.init 7 (fun _ -> c_status_calls ev false calls)) in
  let from_ocaml =
    per_call (fun () ->
        for _ = 1 to calls do
          ignore (Sys.opaque_identity (Clgc.status ev))
        done)
  in
  Printf.printf
    "event status, ns per call, median of 7 x %d: raw from C %.1f, clgc's wrapper from C %.1f (+%.1f), Clgc.status from OCaml %.1f (+%.1f)\n"
    calls raw wrapped (wrapped -. raw) from_ocaml (from_ocaml -. raw)
