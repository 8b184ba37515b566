(* One completion port for the process, watched by Lwt's engine: each
   wait posts its event with a fresh tag and sleeps on a promise that the
   port's drain resolves. *)

let pending : (int, Clgc.status Lwt.u) Hashtbl.t = Hashtbl.create 64
let next = ref 0

let dispatch port =
  match Clgc.drain port with
  | done_ ->
      Array.iter
        (fun (tag, s) ->
          match Hashtbl.find_opt pending tag with
          | Some u ->
              Hashtbl.remove pending tag;
              Lwt.wakeup_later u s
          | None -> ())
        done_
  | exception e ->
      (* A callback's failure: every waiter learns it. *)
      let waiters = Hashtbl.fold (fun _ u l -> u :: l) pending [] in
      List.iter (fun u -> Lwt.wakeup_later_exn u e) waiters;
      Hashtbl.reset pending

let port =
  lazy
    (let p = Clgc.port () in
     ignore (Lwt_engine.on_readable (Clgc.port_fd p) (fun _ -> dispatch p));
     p)

(* A cancelled wait leaves its tag behind: the event stays posted (clgc
   holds it, and the memory of its command, until it completes), and its
   completion, drained, finds no waiter. *)
let status ev =
  match Lazy.force port with
  | exception e -> Lwt.fail e
  | p -> (
      let t, u = Lwt.task () in
      incr next;
      let tag = !next in
      Hashtbl.replace pending tag u;
      match Clgc.post p ev tag with
      | () ->
          Lwt.on_cancel t (fun () -> Hashtbl.remove pending tag);
          t
      | exception e ->
          (* A released event, say: the promise is rejected. *)
          Hashtbl.remove pending tag;
          Lwt.fail e)

let wait ev =
  Lwt.bind (status ev) (function
    | Clgc.Failed s ->
        let code = -14 (* CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST *) in
        Lwt.fail
          (Clgc.Error
             {
               code;
               name = Clgc.error_name code;
               call = "Clgc_lwt.wait";
               detail = Printf.sprintf "the command failed: %s (%d)" (Clgc.error_name s) s;
             })
    | _ -> Lwt.return_unit)
