(* What the tests share: assertions that end the process at once on any
   thread, and PoCL's CPU device. *)

let failed = ref false

let fail fmt =
  Printf.ksprintf
    (fun s ->
      prerr_endline ("FAIL: " ^ s);
      failed := true;
      exit 1)
    fmt

let ok cond fmt = Printf.ksprintf (fun s -> if not cond then fail "%s" s) fmt

let raises_cl name f =
  match f () with
  | _ -> fail "expected Clgc.Error %s, got a value" name
  | exception Clgc.Error e ->
      ok (e.name = name) "expected %s, got %s (%s)" name e.name e.call;
      e
  | exception e -> fail "expected Clgc.Error %s, got %s" name (Printexc.to_string e)

(* f raises Invalid_argument: the binding refused a misuse itself. *)
let invalid what f =
  match f () with
  | _ -> fail "%s: no Invalid_argument" what
  | exception Invalid_argument _ -> ()

(* f raises Clgc.Error, whichever. *)
let cl_error what f =
  match f () with
  | _ -> fail "%s: no Clgc.Error" what
  | exception Clgc.Error _ -> ()

(* A thread whose failure fails the test. *)
let thread f x =
  Thread.create
    (fun x ->
      try f x
      with e -> fail "in a thread: %s" (Printexc.to_string e))
    x

(* The platform of that name, or a failure. *)
let platform name =
  match
    List.find_opt (fun p -> Clgc.string_info p "name" = name) (Array.to_list (Clgc.platforms ()))
  with
  | Some p -> p
  | None -> fail "no platform %s (OCL_ICD_VENDORS?)" name

let pocl () =
  let platform = platform "Portable Computing Language" in
  let device = (Clgc.devices ~kind:`Cpu platform).(0) in
  let context = Clgc.context [| device |] in
  (platform, device, context)

let saxpy_source =
  {|__kernel void saxpy(float a, __global const float *x, __global float *y) {
      size_t i = get_global_id(0);
      y[i] = a * x[i] + y[i];
    }|}

let floats n f =
  let a = Bigarray.(Array1.create float32 c_layout n) in
  for i = 0 to n - 1 do
    a.{i} <- f i
  done;
  a

(* A queue and a saxpy kernel of n items, built, its arguments set:
   y <- 2x + y over x = 0, 1, 2, ... and y, which it returns, zeroed. *)
let saxpy context device n =
  let q = Clgc.queue context device in
  let p = Clgc.program context saxpy_source in
  Clgc.build p;
  let k = Clgc.kernel p "saxpy" in
  let x = Clgc.buffer_of context (floats n float_of_int) in
  let y = Clgc.buffer_of context (floats n (fun _ -> 0.)) in
  Clgc.set_args k [ Clgc.Float32 2.; Clgc.Mem x; Clgc.Mem y ];
  (q, k, y)

let pass name = Printf.printf "PASS: %s\n%!" name
