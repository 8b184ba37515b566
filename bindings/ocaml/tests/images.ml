(* Images and samplers: formats by name, transfers of a box checked
   before OpenCL sees it, a kernel that samples an image; and what a
   careless program does with them (issue 45's rows), each an exception. *)

open Check_lib.Check

let source =
  {|__kernel void fetch(__read_only image2d_t img, sampler_t s,
                       __global float4 *out) {
      int x = get_global_id(0), y = get_global_id(1);
      out[y * 4 + x] = read_imagef(img, s, (int2)(x, y));
    }
    __kernel void add(__global float *y) { y[get_global_id(0)] += 1.0f; }|}

let () =
  let _, device, context = pocl () in
  let q = Clgc.queue context device in
  let rgba = { Clgc.order = "rgba"; channel = "float" } in
  ok
    (List.mem { Clgc.order = "CL_RGBA"; channel = "CL_FLOAT" } (Clgc.image_formats context))
    "rgba float among the 2D formats";
  (* A 4x4 image of float4: element (x, y) is (x, y, 0, 1). *)
  let img = Clgc.image context rgba [| 4; 4 |] in
  ok (Clgc.is_image img) "an image is an image";
  ok (Clgc.image_info img "width" = Clgc.Int 4L) "its width";
  invalid "a buffer's image info" (fun () -> Clgc.image_info (Clgc.buffer context 16) "width");
  let px = floats 64 (fun i -> match i mod 4 with 0 -> float (i / 4 mod 4) | 1 -> float (i / 16) | 2 -> 0. | _ -> 1.) in
  ignore (Clgc.write_image q img px);
  let back = floats 64 (fun _ -> -1.) in
  ignore (Clgc.read_image q img back);
  ok (back = px) "written and read back";
  (* A box: the 2x2 at (2, 1). *)
  let box = floats 16 (fun _ -> 0.) in
  ignore (Clgc.read_image ~origin:[| 2; 1 |] ~region:[| 2; 2 |] q img box);
  ok (box.{0} = 2. && box.{1} = 1. && box.{12} = 3. && box.{13} = 2.) "a box read";
  (* Sampled by a kernel. *)
  let p = Clgc.program context source in
  Clgc.build p;
  let k = Clgc.kernel p "fetch" in
  let out = Clgc.buffer context (64 * 4) in
  let s = Clgc.sampler context in
  Clgc.set_args k [ Clgc.Mem img; Clgc.Sampler s; Clgc.Mem out ];
  Clgc.wait [ Clgc.launch q k [| 4; 4 |] ];
  let got = floats 64 (fun _ -> -1.) in
  ignore (Clgc.read q out got);
  ok (got = px) "a kernel samples the image";
  pass "images and samplers";

  (* Kinds mixed up (issue 45): each was a crash in the other bindings. *)
  let buf = Clgc.buffer context 256 in
  invalid "a buffer where the kernel takes an image" (fun () -> Clgc.set_arg k 0 (Clgc.Mem buf));
  invalid "an image where the kernel takes a buffer" (fun () -> Clgc.set_arg k 2 (Clgc.Mem img));
  invalid "a sampler where the kernel takes an image" (fun () -> Clgc.set_arg k 0 (Clgc.Sampler s));
  invalid "an image where the kernel takes a sampler" (fun () -> Clgc.set_arg k 1 (Clgc.Mem img));
  invalid "a number where the kernel takes a sampler" (fun () -> Clgc.set_arg k 1 (Clgc.Int32 0l));
  let add = Clgc.kernel p "add" in
  invalid "a sampler where the kernel takes a buffer" (fun () -> Clgc.set_arg add 0 (Clgc.Sampler s));
  invalid "read_image of a buffer" (fun () -> Clgc.read_image q buf back);
  invalid "write_image of a buffer" (fun () -> Clgc.write_image q buf back);
  invalid "read of an image" (fun () -> Clgc.read q img back);
  invalid "write of an image" (fun () -> Clgc.write q img back);
  invalid "fill of an image" (fun () -> Clgc.fill q img "\000\000\000\000");
  invalid "copy from an image" (fun () -> Clgc.copy ~size:16 q ~src:img ~dst:buf);
  invalid "a sub-buffer of an image" (fun () -> Clgc.sub_buffer img ~origin:0 ~size:16);
  pass "kinds mixed up";

  (* Names, sizes and boxes. *)
  invalid "no such order" (fun () -> Clgc.image context { rgba with order = "rgbq" } [| 4; 4 |]);
  invalid "a name with a NUL" (fun () -> Clgc.image context { rgba with channel = "float\000" } [| 4 |]);
  invalid "a 3D image of 2 sizes" (fun () -> Clgc.image ~kind:`Image3d context rgba [| 4; 4 |]);
  invalid "four sizes" (fun () -> Clgc.image context rgba [| 1; 1; 1; 1 |]);
  invalid "a negative size" (fun () -> Clgc.image context rgba [| -4 |]);
  invalid "no such addressing" (fun () -> Clgc.sampler ~addressing:"wrap" context);
  (* PoCL says CL_INVALID_BUFFER_SIZE where the specification says
     CL_INVALID_IMAGE_SIZE: an error either way. *)
  (match Clgc.image context rgba [| 0; 4 |] with
  | _ -> fail "an image 0 wide: no Clgc.Error"
  | exception Clgc.Error _ -> ());
  let e = raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.read_image ~origin:[| 4; 0 |] q img back) in
  ok (e.detail = "the origin lies outside the image") "says the origin: %s" e.detail;
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.read_image ~origin:[| 3; 3 |] ~region:[| 2; 1 |] q img back));
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.read_image ~region:[| 0; 1 |] q img back));
  let e = raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.read_image q img (floats 63 float_of_int)) in
  ok (e.detail = "the Bigarray is smaller than the region") "says the Bigarray: %s" e.detail;
  pass "names, sizes and boxes";

  (* Fills and copies of images, and between images and buffers. *)
  let red = Clgc.image context rgba [| 4; 4 |] in
  Clgc.wait [ Clgc.fill_image q red (Clgc.Float4 [| 1.; 0.; 0.; 1. |]) ];
  Clgc.wait [ Clgc.fill_image ~origin:[| 1; 1 |] ~region:[| 2; 2 |] q red (Clgc.Float4 [| 0.; 0.; 1.; 1. |]) ];
  let got = floats 64 (fun _ -> -1.) in
  ignore (Clgc.read_image q red got);
  ok (got.{0} = 1. && got.{2} = 0. && got.{(5 * 4) + 2} = 1. && got.{(5 * 4) + 0} = 0.) "filled, a box blue";
  let copy = Clgc.image context rgba [| 4; 4 |] in
  Clgc.wait [ Clgc.copy_image q ~src:img ~dst:copy ];
  Clgc.wait [ Clgc.copy_image ~src_origin:[| 1; 1 |] ~dst_origin:[| 0; 0 |] ~region:[| 2; 2 |] q ~src:red ~dst:copy ];
  ignore (Clgc.read_image q copy got);
  ok (got.{2} = 1. && got.{6} = 1. && got.{8} = 2. && got.{(15 * 4)} = 3.) "copied, a box over it";
  let packed = Clgc.buffer context (16 * 4) in
  Clgc.wait [ Clgc.copy_image_to_buffer ~origin:[| 2; 2 |] ~region:[| 2; 2 |] ~offset:0 q ~src:img ~dst:packed ];
  let four = floats 16 (fun _ -> -1.) in
  ignore (Clgc.read q packed four);
  ok (four.{0} = 2. && four.{1} = 2. && four.{4} = 3. && four.{12} = 3. && four.{13} = 3.) "a box to a buffer";
  Clgc.wait [ Clgc.copy_buffer_to_image ~origin:[| 0; 0 |] ~region:[| 2; 2 |] q ~src:packed ~dst:copy ];
  ignore (Clgc.read_image ~region:[| 1; 1 |] q copy four);
  ok (four.{0} = 2. && four.{1} = 2.) "and back into an image";
  let uint = Clgc.image context { Clgc.order = "rgba"; channel = "unsigned_int32" } [| 2 |] in
  Clgc.wait [ Clgc.fill_image q uint (Clgc.Int4 [| 7l; 8l; 9l; -1l |]) ];
  let words = Bigarray.(Array1.create int32 c_layout 8) in
  ignore (Clgc.read_image q uint words);
  ok (words.{4} = 7l && words.{7} = -1l) "an integer format filled";
  pass "fills and copies of images";

  invalid "an integer format filled with floats" (fun () -> Clgc.fill_image q uint (Clgc.Float4 [| 1.; 1.; 1.; 1. |]));
  invalid "a float format filled with integers" (fun () -> Clgc.fill_image q red (Clgc.Int4 [| 1l; 1l; 1l; 1l |]));
  invalid "a color of 3 channels" (fun () -> Clgc.fill_image q red (Clgc.Float4 [| 1.; 1.; 1. |]));
  invalid "a buffer filled as an image" (fun () -> Clgc.fill_image q buf (Clgc.Float4 [| 1.; 1.; 1.; 1. |]));
  invalid "an image copied from a buffer as an image" (fun () -> Clgc.copy_image q ~src:buf ~dst:copy);
  invalid "an image to an image as a buffer" (fun () -> Clgc.copy_image_to_buffer q ~src:img ~dst:copy);
  invalid "a negative offset" (fun () -> Clgc.copy_image_to_buffer ~offset:(-1) q ~src:img ~dst:packed);
  let e = raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.fill_image ~origin:[| 4; 0 |] q red (Clgc.Float4 [| 0.; 0.; 0.; 0. |])) in
  ok (e.detail = "the image: the origin lies outside the image") "a fill outside: %s" e.detail;
  let e = raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.copy_image ~dst_origin:[| 2; 2 |] q ~src:img ~dst:copy) in
  ok (e.detail = "the destination: the region reaches past the image") "a copy past: %s" e.detail;
  let e = raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.copy_image_to_buffer q ~src:img ~dst:packed) in
  ok (e.detail = "the buffer: the region, packed, reaches past its end") "a buffer too small: %s" e.detail;
  ignore (raises_cl "CL_INVALID_VALUE" (fun () -> Clgc.copy_buffer_to_image ~offset:max_int q ~src:packed ~dst:copy));
  ignore (raises_cl "CL_IMAGE_FORMAT_MISMATCH" (fun () -> Clgc.copy_image q ~src:uint ~dst:copy ~region:[| 1; 1 |]));
  Clgc.release copy;
  ignore (raises_cl "CL_INVALID_MEM_OBJECT" (fun () -> Clgc.copy_image q ~src:img ~dst:copy));
  pass "image fills and copies out of bounds";

  (* An image set as an argument, dropped and collected: the kernel's
     table holds it. *)
  Clgc.set_arg k 0 (Clgc.Mem (Clgc.image context rgba [| 4; 4 |]));
  Clgc.set_arg k 1 (Clgc.Sampler (Clgc.sampler context));
  Gc.full_major ();
  Gc.full_major ();
  Clgc.wait [ Clgc.launch q k [| 4; 4 |] ];
  pass "a dropped image argument, collected, still launches";
  Clgc.finish q
