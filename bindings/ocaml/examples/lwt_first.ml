(* docs/ocaml.md's Lwt example: the launch's event as a promise, the
   program's other Lwt threads running while the kernel does. *)

open Lwt.Syntax

let () =
  let n = 1024 in
  let queue, kernel, by, y = Saxpy.setup n in
  Lwt_main.run
    (let* () = Clgc_lwt.wait (Clgc.launch queue kernel [| n |]) in
     Clgc_lwt.wait (Clgc.read ~blocking:false queue by y));
  Saxpy.check y
