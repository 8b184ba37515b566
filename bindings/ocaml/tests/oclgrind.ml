(*! oclgrind *)
(* On Oclgrind, an OpenCL 1.2 driver without
   clCreateCommandQueueWithProperties: Clgc.queue falls back to
   clCreateCommandQueue (profiling passed as its bit), and saxpy runs, its
   profile read; a float4 argument goes as Raw bytes. run-ocaml.sh points
   the loader at Oclgrind and clgc's stub only. *)

open Check_lib.Check

let () =
  let device = (Clgc.devices (platform "Oclgrind")).(0) in
  let version = Clgc.string_info device "version" in
  ok (String.length version > 9 && String.sub version 0 9 = "OpenCL 1.") "OpenCL 1.x: %s" version;
  let context = Clgc.context [| device |] in
  let q = Clgc.queue ~profiling:true context device in
  ok (Clgc.info q "properties" = Clgc.Flags [ "CL_QUEUE_PROFILING_ENABLE" ]) "a 1.x queue's properties";
  let p =
    Clgc.program context
      (saxpy_source
     ^ {|__kernel void scale(float4 s, __global float4 *v) { v[get_global_id(0)] *= s; }|})
  in
  Clgc.build p;
  let n = 64 in
  let k = Clgc.kernel p "saxpy" in
  let x = Clgc.buffer_of ~copy:true context (floats n float_of_int) in
  let y = Clgc.buffer_of ~copy:true context (floats n (fun i -> float (10 * i))) in
  Clgc.set_args k [ Clgc.Float32 2.; Clgc.Mem x; Clgc.Mem y ];
  let ev = Clgc.launch q k [| n |] in
  Clgc.wait [ ev ];
  let got = floats n (fun _ -> 0.) in
  ignore (Clgc.read q y got);
  ok (got = floats n (fun i -> float (12 * i))) "saxpy on Oclgrind";
  let t = Clgc.profile ev in
  ok (t.ended >= t.started && t.started > 0L) "its profile";
  pass "a queue on OpenCL 1.2";

  (* float4 s = (1, 2, 3, 4), laid out as the kernel takes it. *)
  let s = Bytes.create 16 in
  List.iteri (fun i f -> Bytes.set_int32_le s (4 * i) (Int32.bits_of_float f)) [ 1.; 2.; 3.; 4. ];
  let scale = Clgc.kernel p "scale" in
  let v = Clgc.buffer_of ~copy:true context (floats 8 (fun _ -> 1.)) in
  Clgc.set_args scale [ Clgc.Raw s; Clgc.Mem v ];
  Clgc.wait [ Clgc.launch q scale [| 2 |] ];
  let got = floats 8 (fun _ -> 0.) in
  ignore (Clgc.read q v got);
  ok (got = floats 8 (fun i -> float (1 + (i mod 4)))) "a float4 argument as Raw";
  let e = raises_cl "CL_INVALID_ARG_SIZE" (fun () -> Clgc.set_arg scale 0 (Clgc.Raw (Bytes.create 8))) in
  ok (e.detail = "argument 0 (s) of kernel scale is a float4 (16 bytes), not 8 bytes") "says %s" e.detail;
  pass "a vector argument"
