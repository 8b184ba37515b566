(* Rectangles between buffers and Bigarrays, and maps of buffers onto
   Bigarrays; and what a careless program does with them, each an
   exception. *)

open Check_lib.Check

let bytes n f = Bigarray.(Array1.init char c_layout n (fun i -> Char.chr (f i land 255)))

let () =
  let _, device, context = pocl () in
  let q = Clgc.queue context device in
  (* A 16x4 buffer of bytes, byte (x, y) = 16y + x. *)
  let b = Clgc.buffer context 64 in
  ignore (Clgc.write q b (bytes 64 Fun.id));
  (* The 4x2 rectangle at (2, 1) read packed: rows 1 and 2, bytes 2-5. *)
  let r = bytes 8 (fun _ -> 0) in
  ignore (Clgc.read_rect q b ~buffer_origin:[| 2; 1 |] ~buffer_pitches:(16, 0) ~region:[| 4; 2 |] r);
  ok (r = bytes 8 (fun i -> 16 * (1 + (i / 4)) + 2 + (i mod 4))) "a rectangle read packed";
  (* Written back into a Bigarray of rows of 8, at (1, 1) there. *)
  let host = bytes 32 (fun _ -> 0) in
  ignore
    (Clgc.read_rect q b ~buffer_origin:[| 2; 1 |] ~buffer_pitches:(16, 0) ~host_origin:[| 1; 1 |]
       ~host_pitches:(8, 0) ~region:[| 4; 2 |] host);
  ok (Char.code host.{9} = 18 && Char.code host.{20} = 37 && host.{8} = '\000') "into a wider Bigarray";
  ignore (Clgc.write_rect q b ~buffer_origin:[| 0; 3 |] ~buffer_pitches:(16, 0) ~region:[| 8; 1 |] (bytes 8 (fun _ -> 255)));
  let all = bytes 64 (fun _ -> 0) in
  ignore (Clgc.read q b all);
  ok (Char.code all.{48} = 255 && Char.code all.{55} = 255 && Char.code all.{56} = 56) "a row written";
  let c = Clgc.buffer context 64 in
  ignore (Clgc.fill q c "\000");
  Clgc.wait
    [ Clgc.copy_rect q ~src:b ~dst:c ~src_origin:[| 0; 3 |] ~src_pitches:(16, 0) ~dst_pitches:(16, 0) ~region:[| 4; 1 |] ];
  ignore (Clgc.read q c all);
  ok (Char.code all.{3} = 255 && all.{4} = '\000') "a rectangle copied";
  (* Non-blocking, the Bigarray dropped and collected meanwhile: the
     command keeps it. *)
  let gate = Clgc.user_event context in
  let ev = Clgc.write_rect ~blocking:false ~wait:[ gate ] q c ~region:[| 64 |] (bytes 64 (fun _ -> 7)) in
  Gc.full_major ();
  Clgc.set_complete gate;
  Clgc.wait [ ev ];
  ignore (Clgc.read q c all);
  ok (all = bytes 64 (fun _ -> 7)) "a collected Bigarray written";
  pass "rectangles";

  let e = raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.read_rect q b ~buffer_origin:[| 0; 4 |] ~buffer_pitches:(16, 0) ~region:[| 1 |] r) in
  ok (e.detail = "the buffer's side: the rectangle reaches past the buffer's end") "says the buffer: %s" e.detail;
  let e = raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.read_rect q b ~region:[| 9 |] r) in
  ok (e.detail = "the Bigarray's side: the rectangle reaches past the buffer's end") "says the Bigarray: %s" e.detail;
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.read_rect q b ~region:[| 4; 0 |] r));
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.read_rect q b ~buffer_pitches:(2, 0) ~region:[| 4; 2 |] r));
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.read_rect q b ~region:[| max_int; 1 |] r));
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.copy_rect q ~src:b ~dst:c ~dst_origin:[| 61 |] ~region:[| 4 |]));
  invalid "a negative origin" (fun () -> Clgc.read_rect q b ~buffer_origin:[| -1 |] ~region:[| 1 |] r);
  invalid "four sizes" (fun () -> Clgc.read_rect q b ~region:[| 1; 1; 1; 1 |] r);
  invalid "no region" (fun () -> Clgc.copy_rect q ~src:b ~dst:c ~region:[||]);
  let img = Clgc.image context { Clgc.order = "r"; channel = "unsigned_int8" } [| 8 |] in
  invalid "a rectangle of an image" (fun () -> Clgc.read_rect q img ~region:[| 1 |] r);
  invalid "a rectangle copied into an image" (fun () -> Clgc.copy_rect q ~src:b ~dst:img ~region:[| 1 |]);
  Clgc.release c;
  ignore (raises_cl "CL_INVALID_MEM_OBJECT" (fun () -> Clgc.copy_rect q ~src:b ~dst:c ~region:[| 1 |]));
  pass "rectangles out of bounds";
  Clgc.finish q
