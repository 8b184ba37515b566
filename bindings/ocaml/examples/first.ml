(* docs/ocaml.md's first example: a launch and a wait while other threads
   run, then y read back. *)

let () =
  let n = 1024 in
  let queue, kernel, by, y = Saxpy.setup n in
  Clgc.wait [ Clgc.launch queue kernel [| n |] ];  (* others run meanwhile *)
  Clgc.wait [ Clgc.read queue by y ];
  Saxpy.check y
