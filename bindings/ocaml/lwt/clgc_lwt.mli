(** clgc's events as Lwt promises: a kernel runs while the other Lwt
    threads of the program run (docs/ocaml.md, "Lwt"). *)

val wait : Clgc.event -> unit Lwt.t
(** Fulfilled once the event completes; rejected with {!Clgc.Error}
    ([CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST], the event's status
    in [detail]) if its command failed, with {!Clgc.Callback_failed} for
    what an event callback raised meanwhile. The event completes into
    one completion port, whose descriptor Lwt's engine watches. *)

val status : Clgc.event -> Clgc.status Lwt.t
(** The event's final status: [Complete] or [Failed]. *)
