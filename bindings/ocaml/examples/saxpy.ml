(* The examples' saxpy (docs/ocaml.md), y <- 2x + y over n floats, every
   call letting the runtime lock go while OpenCL works. It picks PoCL by
   its platform's name (make check's vendors include a stub). *)

let source =
  {|__kernel void saxpy(float a, __global const float *x, __global float *y) {
      size_t i = get_global_id(0);
      y[i] = a * x[i] + y[i];
    }|}

(* PoCL's first device, by its platform's name. *)
let pocl_device () =
  let platform =
    List.find
      (fun p -> Clgc.string_info p "name" = "Portable Computing Language")
      (Array.to_list (Clgc.platforms ()))
  in
  (Clgc.devices platform).(0)

(* The queue and the kernel, its arguments set, and y's buffer and memory:
   y is 1 everywhere until the kernel runs. *)
let setup n =
  let device = pocl_device () in
  let context = Clgc.context [| device |] in
  let queue = Clgc.queue context device in
  let program = Clgc.program context source in
  Clgc.build program;                      (* Clgc.Error with the log *)
  let kernel = Clgc.kernel program "saxpy" in
  let floats f = Bigarray.(Array1.init float32 c_layout n f) in
  let x = floats float_of_int and y = floats (fun _ -> 1.) in
  let bx = Clgc.buffer_of context x in     (* over x's memory, no copy *)
  let by = Clgc.buffer_of ~copy:true context y in
  Clgc.set_args kernel [ Clgc.Float32 2.; Clgc.Mem bx; Clgc.Mem by ];
  (queue, kernel, by, y)

(* Exit 1 unless y is what saxpy makes. *)
let check y =
  Printf.printf "y[0..3] = %g %g %g %g\n" y.{0} y.{1} y.{2} y.{3};
  for i = 0 to Bigarray.Array1.dim y - 1 do
    if y.{i} <> (2. *. float_of_int i) +. 1. then exit 1
  done
