(** clgc's events as Lwt promises: a kernel runs while the other Lwt
    threads of the program run (docs/ocaml.md, "Lwt"). *)

val wait : Clgc.event -> unit Lwt.t
(** Fulfilled once the event completes; rejected with {!Clgc.Error}
    ([CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST], the event's status
    in [detail]) if its command failed, with {!Clgc.Callback_failed} for
    what an event callback raised meanwhile, and with what posting the
    event raised (a released event's {!Clgc.Error}). The event completes
    into one completion port, whose descriptor Lwt's engine watches.
    [Lwt.cancel] of the promise detaches it: it is rejected with
    [Lwt.Canceled] at once, the command runs on, and clgc keeps the event
    and the memory of its command (a non-blocking transfer's Bigarray)
    until it ends. *)

val status : Clgc.event -> Clgc.status Lwt.t
(** The event's final status: [Complete] or [Failed]; cancelled, and
    rejected, as {!wait}. *)
