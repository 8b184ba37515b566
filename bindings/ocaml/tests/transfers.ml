(* Rectangles between buffers and Bigarrays, and maps of buffers onto
   Bigarrays; and what a careless program does with them, each an
   exception, or memory kept for as long as a Bigarray reaches it. *)

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
  (* Maps. *)
  let b = Clgc.buffer_of ~copy:true context (floats 16 float_of_int) in
  let m = Clgc.map q b Bigarray.float32 in
  ok (Bigarray.Array1.dim m = 16 && m.{5} = 5.) "a map reads the buffer";
  m.{5} <- 50.;
  ok (Clgc.info b "map-count" = Clgc.Int 1L) "mapped once";
  Clgc.wait [ Clgc.unmap q m ];
  ok (Bigarray.Array1.dim m = 0) "an unmapped Bigarray is empty";
  invalid "an element of an unmapped Bigarray" (fun () -> m.{5});
  invalid "an element written" (fun () -> m.{0} <- 1.);
  let back = floats 16 (fun _ -> 0.) in
  ignore (Clgc.read q b back);
  ok (back.{5} = 50. && back.{6} = 6.) "what the map wrote, the buffer has";
  let part = Clgc.map ~access:`Read ~offset:16 ~size:16 q b Bigarray.int32 in
  ok (Bigarray.Array1.dim part = 4 && part.{0} = Int32.bits_of_float 4.) "a part, of another kind";
  (* Released while mapped: the mapping keeps the buffer. *)
  Clgc.release b;
  Gc.full_major ();
  ok (part.{2} = Int32.bits_of_float 6.) "a released buffer's mapping still reads";
  Clgc.wait [ Clgc.unmap q part ];
  pass "maps";

  let b = Clgc.buffer_of ~copy:true context (floats 16 float_of_int) in
  let m = Clgc.map q b Bigarray.float32 in
  invalid "unmap of a Bigarray no map returned" (fun () -> Clgc.unmap q (floats 4 float_of_int));
  let sub = Bigarray.Array1.sub m 4 4 in
  invalid "unmap of a part of a mapping" (fun () -> Clgc.unmap q sub);
  Clgc.wait [ Clgc.unmap q m ];
  invalid "unmap twice" (fun () -> Clgc.unmap q m);
  (* The sub-array outlives the unmap and the buffer's release: the
     mapping keeps the buffer until it is collected, so reading it
     reaches no freed memory (valgrind would say). *)
  Clgc.release b;
  Gc.full_major ();
  ignore (Sys.opaque_identity sub.{0});
  invalid "a size not of whole elements" (fun () -> Clgc.map ~size:6 q (Clgc.buffer context 64) Bigarray.float32);
  invalid "a negative offset" (fun () -> Clgc.map ~offset:(-4) q (Clgc.buffer context 64) Bigarray.char);
  let e = raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.map ~offset:65 q (Clgc.buffer context 64) Bigarray.char) in
  ok (e.detail = "the offset lies past the buffer's end") "says the offset: %s" e.detail;
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.map ~size:128 q (Clgc.buffer context 64) Bigarray.char));
  invalid "a map of an image" (fun () -> Clgc.map q img Bigarray.char);
  ignore (raises_cl "CL_INVALID_MEM_OBJECT" (fun () -> Clgc.map q b Bigarray.char));
  (* A mapping whose Bigarray is dropped is unmapped once collected. *)
  let b = Clgc.buffer context 64 in
  ignore (Sys.opaque_identity (Clgc.map q b Bigarray.char));
  ok (Clgc.info b "map-count" = Clgc.Int 1L) "a map dropped";
  Gc.full_major ();
  Clgc.wait [ Clgc.unmap q (Clgc.map q (Clgc.buffer context 4) Bigarray.char) ];
  Clgc.finish q;
  ok (Clgc.info b "map-count" = Clgc.Int 0L) "unmapped once collected";
  (* Many maps and unmaps, their Bigarrays collected in any order. *)
  for i = 1 to 200 do
    let m = Clgc.map ~offset:(i mod 16 * 4) ~size:4 q b Bigarray.int32 in
    m.{0} <- Int32.of_int i;
    if i mod 3 <> 0 then ignore (Clgc.unmap q m);
    if i mod 50 = 0 then Gc.full_major ()
  done;
  Gc.full_major ();
  Clgc.wait [ Clgc.unmap q (Clgc.map q b Bigarray.char) ];
  Clgc.finish q;
  ok (Clgc.info b "map-count" = Clgc.Int 0L) "200 maps, none left";
  pass "maps misused";
  Clgc.finish q
