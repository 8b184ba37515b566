/* The tables the bindings share (clgc/names.h), generated from the
 * registry: counts, known entries, and clean failures of unknown names. */

#include <string.h>

#include "testutil.h"

START_TEST(error_names_are_the_registrys)
{
    int32_t code = 0;

    ck_assert_uint_eq(clgc_cl_error_count(), 111);
    ck_assert_str_eq(clgc_cl_error_name(CL_SUCCESS), "CL_SUCCESS");
    ck_assert_str_eq(clgc_cl_error_name(CL_INVALID_VALUE), "CL_INVALID_VALUE");
    ck_assert_str_eq(clgc_cl_error_name(CL_MAX_SIZE_RESTRICTION_EXCEEDED),
                     "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
    ck_assert_str_eq(clgc_cl_error_name(CL_PLATFORM_NOT_FOUND_KHR),
                     "CL_PLATFORM_NOT_FOUND_KHR");
    ck_assert_str_eq(clgc_cl_error_name(-1142), "CL_INVALID_SEMAPHORE_KHR");
    /* Listed by the registry's error-code blocks only. */
    ck_assert_str_eq(clgc_cl_error_name(-1106), "CL_PIPE_FULL_INTEL");
    ck_assert_str_eq(clgc_cl_error_name(-1107), "CL_PIPE_EMPTY_INTEL");
    /* A vendor's placeholder is no error code. */
    ck_assert_ptr_null(clgc_cl_error_name(-1122));
    /* Two names for one value: the first the registry requires. */
    ck_assert_str_eq(clgc_cl_error_name(-1010),
                     "CL_INVALID_DX9_MEDIA_ADAPTER_KHR");
    ck_assert_str_eq(clgc_cl_error_at(0, &code), "CL_SUCCESS");
    ck_assert_int_eq(code, 0);
    ck_assert_ptr_null(clgc_cl_error_at(111, &code));
}
END_TEST

START_TEST(every_error_name_finds_its_code)
{
    size_t negative = 0;

    for (size_t i = 0; i < clgc_cl_error_count(); i++) {
        int32_t code;
        const char *name = clgc_cl_error_at(i, &code);
        const char *first = clgc_cl_error_name(code);

        ck_assert_ptr_nonnull(first);
        /* The name itself, or an earlier name of the same value. */
        if (strcmp(first, name) != 0)
            for (size_t j = 0; j < i; j++) {
                int32_t other;

                if (clgc_cl_error_at(j, &other) == first) {
                    ck_assert_int_eq(other, code);
                    break;
                }
                ck_assert_uint_lt(j + 1, i);
            }
        negative += code < 0;
    }
    ck_assert_uint_eq(negative, 107);
}
END_TEST

START_TEST(unknown_error_codes_have_no_name)
{
    ck_assert_ptr_null(clgc_cl_error_name(1));
    ck_assert_ptr_null(clgc_cl_error_name(-9999));
    ck_assert_ptr_null(clgc_cl_error_name(INT32_MIN));
    ck_assert_ptr_null(clgc_cl_error_name(INT32_MAX));
}
END_TEST

/* Every family resolves by name, names a command and a kind that exist,
 * and finds each of its queries by name; every group and kind a query
 * names exists. */
START_TEST(every_family_resolves)
{
    size_t total = 0;

    ck_assert_uint_eq(clgc_info_family_count(), 16);
    ck_assert_ptr_null(clgc_info_family_at(16));
    for (size_t i = 0; i < clgc_info_family_count(); i++) {
        const clgc_info_family_t *f = clgc_info_family_at(i);

        ck_assert_ptr_eq(clgc_info_family_find(f->name), f);
        ck_assert_ptr_nonnull(clgc_command_find(f->command));
        ck_assert_ptr_nonnull(clgc_object_kind_find(f->kind));
        ck_assert_uint_gt(f->count, 0);
        for (size_t k = 0; k < f->count; k++) {
            const clgc_info_t *info = &f->infos[k];

            ck_assert_msg(clgc_info_find(f, info->name) == info,
                          "%s does not find %s", f->name, info->name);
            ck_assert_int_eq(strncmp(info->name, "CL_", 3), 0);
            switch (info->type) {
            case CLGC_INFO_BITFIELD:
            case CLGC_INFO_ENUM:
            case CLGC_INFO_ENUM_ARRAY:
                ck_assert_msg(clgc_enum_group_find(info->group) != NULL,
                              "%s: no group %s", info->name, info->group);
                break;
            case CLGC_INFO_HANDLE:
            case CLGC_INFO_HANDLE_ARRAY:
                ck_assert_ptr_nonnull(clgc_object_kind_find(info->group));
                break;
            case CLGC_INFO_PROPERTIES:
            case CLGC_INFO_PROPERTIES_INTPTR:
                ck_assert_ptr_nonnull(info->group);
                break;
            default:
                ck_assert_ptr_null(info->group);
            }
        }
        total += f->count;
    }
    ck_assert_uint_eq(clgc_info_family_find("cl_platform_info")->count, 18);
    ck_assert_uint_eq(clgc_info_family_find("cl_device_info")->count, 231);
    ck_assert_uint_eq(total, 379);
}
END_TEST

START_TEST(known_infos_have_their_types)
{
    const clgc_info_family_t *dev = clgc_info_family_find("cl_device_info");
    const clgc_info_t *i = clgc_info_find(dev, "CL_DEVICE_NAME");

    ck_assert_uint_eq(i->value, CL_DEVICE_NAME);
    ck_assert_int_eq(i->type, CLGC_INFO_STRING);
    ck_assert_str_eq(i->origin, "CL_VERSION_1_0");
    i = clgc_info_find(dev, "CL_DEVICE_TYPE");
    ck_assert_int_eq(i->type, CLGC_INFO_BITFIELD);
    ck_assert_str_eq(i->group, "cl_device_type");
    i = clgc_info_find(dev, "CL_DEVICE_MAX_WORK_ITEM_SIZES");
    ck_assert_int_eq(i->type, CLGC_INFO_SIZE_ARRAY);
    i = clgc_info_find(dev, "CL_DEVICE_PLATFORM");
    ck_assert_int_eq(i->type, CLGC_INFO_HANDLE);
    ck_assert_str_eq(i->group, "platform");
    /* An alias takes the type of the name of the same value. */
    i = clgc_info_find(dev, "CL_DEVICE_UUID_KHR");
    ck_assert_uint_eq(i->value, 0x106A);
    ck_assert_int_eq(i->type, CLGC_INFO_BYTES);
    ck_assert_str_eq(i->origin, "cl_khr_device_uuid");
    i = clgc_info_find(clgc_info_family_find("cl_event_info"),
                       "CL_EVENT_COMMAND_EXECUTION_STATUS");
    ck_assert_int_eq(i->type, CLGC_INFO_ENUM);
    ck_assert_str_eq(i->group, "cl_command_execution_status");
    i = clgc_info_find(clgc_info_family_find("cl_context_info"),
                       "CL_CONTEXT_DEVICES");
    ck_assert_int_eq(i->type, CLGC_INFO_HANDLE_ARRAY);
    ck_assert_str_eq(i->group, "device");
}
END_TEST

START_TEST(info_types_have_names)
{
    ck_assert_str_eq(clgc_info_type_name(CLGC_INFO_STRING), "string");
    ck_assert_str_eq(clgc_info_type_name(CLGC_INFO_NAME_VERSION_ARRAY),
                     "name_version_array");
    ck_assert_str_eq(clgc_info_type_name(CLGC_INFO_BYTES), "bytes");
    ck_assert_ptr_null(
        clgc_info_type_name((clgc_info_type_t)(CLGC_INFO_BYTES + 1)));
    ck_assert_ptr_null(clgc_info_type_name((clgc_info_type_t)-1));
    ck_assert_uint_eq(clgc_info_type_size(CLGC_INFO_ULONG), 8);
    ck_assert_uint_eq(clgc_info_type_size(CLGC_INFO_NAME_VERSION_ARRAY),
                      sizeof(cl_name_version));
    ck_assert_uint_eq(clgc_info_type_size(CLGC_INFO_STRING), 0);
}
END_TEST

START_TEST(short_names_find_their_queries)
{
    const clgc_info_family_t *dev = clgc_info_family_find("cl_device_info");

    ck_assert_str_eq(clgc_info_find(dev, "name")->name, "CL_DEVICE_NAME");
    ck_assert_str_eq(clgc_info_find(dev, "max-compute-units")->name,
                     "CL_DEVICE_MAX_COMPUTE_UNITS");
    ck_assert_str_eq(clgc_info_find(dev, "Max_Compute_Units")->name,
                     "CL_DEVICE_MAX_COMPUTE_UNITS");
    ck_assert_str_eq(clgc_info_find(dev, "driver_version")->name,
                     "CL_DRIVER_VERSION");
    ck_assert_str_eq(
        clgc_info_find(clgc_info_family_find("cl_profiling_info"), "end")->name,
        "CL_PROFILING_COMMAND_END");
}
END_TEST

START_TEST(unknown_infos_are_not_found)
{
    const clgc_info_family_t *dev = clgc_info_family_find("cl_device_info");
    char longname[300];

    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    ck_assert_ptr_null(clgc_info_find(dev, "CL_PLATFORM_NAME"));
    ck_assert_ptr_null(clgc_info_find(dev, "CL_NAME"));
    ck_assert_ptr_null(clgc_info_find(dev, "colour"));
    ck_assert_ptr_null(clgc_info_find(dev, ""));
    ck_assert_ptr_null(clgc_info_find(dev, longname));
    ck_assert_ptr_null(clgc_info_find(dev, NULL));
    ck_assert_ptr_null(clgc_info_find(NULL, "CL_DEVICE_NAME"));
    ck_assert_ptr_null(clgc_info_family_find("cl_colour_info"));
    ck_assert_ptr_null(clgc_info_family_find(NULL));
}
END_TEST

START_TEST(enum_groups_name_their_values)
{
    const clgc_enum_group_t *g = clgc_enum_group_find("cl_device_type");

    ck_assert_int_eq(g->bitfield, 1);
    ck_assert_str_eq(clgc_enum_name(g, CL_DEVICE_TYPE_CPU),
                     "CL_DEVICE_TYPE_CPU");
    /* A mask of several bits is no flag. */
    ck_assert_ptr_null(clgc_enum_name(g, (int64_t)CL_DEVICE_TYPE_ALL));
    g = clgc_enum_group_find("cl_build_status");
    ck_assert_int_eq(g->bitfield, 0);
    ck_assert_str_eq(clgc_enum_name(g, CL_BUILD_ERROR), "CL_BUILD_ERROR");
    ck_assert_str_eq(
        clgc_enum_name(clgc_enum_group_find("cl_command_execution_status"),
                       CL_COMPLETE),
        "CL_COMPLETE");
    ck_assert_str_eq(
        clgc_enum_name(clgc_enum_group_find("cl_channel_order"), CL_RGBA),
        "CL_RGBA");
    ck_assert_ptr_null(clgc_enum_name(g, 12345));
    ck_assert_ptr_null(clgc_enum_name(NULL, 0));
    ck_assert_ptr_null(clgc_enum_group_find("cl_colour"));
    ck_assert_ptr_null(clgc_enum_group_find(NULL));
}
END_TEST

/* Names find their values: the registry's, and the short ones a binding
 * takes as a symbol. Every value of every group checked would need the
 * groups' list; these are the groups the bindings read. */
START_TEST(enum_names_find_their_values)
{
    const clgc_enum_group_t *order = clgc_enum_group_find("cl_channel_order");
    const clgc_enum_group_t *addr = clgc_enum_group_find("cl_addressing_mode");
    int64_t v = -1;

    ck_assert_int_eq(clgc_enum_find(order, "CL_RGBA", &v), 1);
    ck_assert_int_eq(v, CL_RGBA);
    ck_assert_int_eq(clgc_enum_find(order, "rgba", &v), 1);
    ck_assert_int_eq(v, CL_RGBA);
    ck_assert_int_eq(clgc_enum_find(order, "cl_bgra", &v), 1);
    ck_assert_int_eq(v, CL_BGRA);
    ck_assert_int_eq(clgc_enum_find(order, "CL_sRGBA", &v), 1);
    ck_assert_int_eq(v, CL_sRGBA);
    ck_assert_int_eq(
        clgc_enum_find(clgc_enum_group_find("cl_channel_type"), "float", &v),
        1);
    ck_assert_int_eq(v, CL_FLOAT);
    ck_assert_int_eq(clgc_enum_find(addr, "clamp-to-edge", &v), 1);
    ck_assert_int_eq(v, CL_ADDRESS_CLAMP_TO_EDGE);
    ck_assert_int_eq(clgc_enum_find(addr, "CL_ADDRESS_REPEAT", &v), 1);
    ck_assert_int_eq(v, CL_ADDRESS_REPEAT);
    /* Not a name of the group, or only a piece of one. */
    v = 7;
    ck_assert_int_eq(clgc_enum_find(addr, "rgba", &v), 0);
    ck_assert_int_eq(clgc_enum_find(addr, "clamp_to", &v), 0);
    ck_assert_int_eq(clgc_enum_find(addr, "", &v), 0);
    ck_assert_int_eq(clgc_enum_find(addr, "clamp_to_edge_", &v), 0);
    ck_assert_int_eq(v, 7);
    ck_assert_int_eq(clgc_enum_find(NULL, "rgba", &v), 0);
    ck_assert_int_eq(clgc_enum_find(order, NULL, &v), 0);
    ck_assert_int_eq(clgc_enum_find(order, "rgba", NULL), 0);
}
END_TEST

START_TEST(object_kinds_name_their_commands)
{
    const clgc_object_kind_t *k = clgc_object_kind_find("command_queue");

    ck_assert_uint_eq(clgc_object_kind_count(), 11);
    ck_assert_str_eq(k->type, "cl_command_queue");
    ck_assert_str_eq(k->info, "clGetCommandQueueInfo");
    ck_assert_str_eq(k->release, "clReleaseCommandQueue");
    ck_assert_int_eq(k->invalid, CL_INVALID_COMMAND_QUEUE);
    ck_assert_str_eq(k->invalid_name, "CL_INVALID_COMMAND_QUEUE");
    k = clgc_object_kind_find("platform");
    ck_assert_ptr_null(k->retain);
    ck_assert_ptr_null(k->release);
    for (size_t i = 0; i < clgc_object_kind_count(); i++) {
        k = clgc_object_kind_at(i);
        ck_assert_ptr_nonnull(clgc_command_find(k->info));
        ck_assert_str_eq(clgc_cl_error_name(k->invalid), k->invalid_name);
        ck_assert_ptr_eq(clgc_object_kind_find(k->name), k);
    }
    ck_assert_ptr_null(clgc_object_kind_at(11));
    ck_assert_ptr_null(clgc_object_kind_find("colour"));
    ck_assert_ptr_null(clgc_object_kind_find(NULL));
}
END_TEST

/* clgc_info_get answers a query of any family through its command, with
 * the device or argument index the family takes, and refuses a family
 * that is not the table's or lacks what it takes. */
START_TEST(one_call_answers_every_family)
{
    const clgc_info_family_t *platform =
                                 clgc_info_family_find("cl_platform_info"),
                             *device = clgc_info_family_find("cl_device_info"),
                             *build =
                                 clgc_info_family_find("cl_program_build_info");
    cl_platform_id p = test_platform(TEST_POCL);
    clgc_info_family_t copy = *device;
    const char *src = "__kernel void k(void) {}";
    cl_device_id d;
    cl_context context;
    cl_program program;
    clgc_info_extra_t x = {NULL, 0, 0, NULL};
    cl_build_status status = CL_BUILD_NONE;
    cl_uint units = 0;
    char name[256] = "";
    cl_int err;

    ck_assert_int_eq(clgc_info_get(platform, p, NULL, CL_PLATFORM_NAME,
                                   sizeof(name), name, NULL),
                     CL_SUCCESS);
    ck_assert_ptr_nonnull(
        strstr(name, test_elsewhere() != NULL ? test_elsewhere() : TEST_POCL));
    ck_assert_int_eq(clGetDeviceIDs(p, test_device_type(), 1, &d, NULL), 0);
    ck_assert_int_eq(clgc_info_get(device, d, NULL, CL_DEVICE_MAX_COMPUTE_UNITS,
                                   sizeof(units), &units, NULL),
                     CL_SUCCESS);
    ck_assert_uint_gt(units, 0);
    context = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    program = clCreateProgramWithSource(context, 1, &src, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    x.device = d;
    ck_assert_int_eq(clgc_info_get(build, program, &x, CL_PROGRAM_BUILD_STATUS,
                                   sizeof(status), &status, NULL),
                     CL_SUCCESS);
    ck_assert_int_eq(status, CL_BUILD_NONE);
    ck_assert_int_eq(clgc_info_get(build, program, NULL,
                                   CL_PROGRAM_BUILD_STATUS, sizeof(status),
                                   &status, NULL),
                     CL_INVALID_VALUE);
    ck_assert_int_eq(clgc_info_get(NULL, d, NULL, CL_DEVICE_MAX_COMPUTE_UNITS,
                                   sizeof(units), &units, NULL),
                     CL_INVALID_VALUE);
    ck_assert_int_eq(clgc_info_get(&copy, d, NULL, CL_DEVICE_MAX_COMPUTE_UNITS,
                                   sizeof(units), &units, NULL),
                     CL_INVALID_VALUE);
    ck_assert_int_eq(
        clgc_info_get((const clgc_info_family_t *)((const char *)device + 1), d,
                      NULL, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units,
                      NULL),
        CL_INVALID_VALUE);
    clReleaseProgram(program);
    clReleaseContext(context);
}
END_TEST

Suite *
clgc_make_names_suite(void)
{
    Suite *s = suite_create("names");
    TCase *tc = test_case("errors");

    tcase_add_test(tc, error_names_are_the_registrys);
    tcase_add_test(tc, every_error_name_finds_its_code);
    tcase_add_test(tc, unknown_error_codes_have_no_name);
    suite_add_tcase(s, tc);
    tc = test_case("infos");
    tcase_add_test(tc, every_family_resolves);
    tcase_add_test(tc, known_infos_have_their_types);
    tcase_add_test(tc, info_types_have_names);
    tcase_add_test(tc, short_names_find_their_queries);
    tcase_add_test(tc, unknown_infos_are_not_found);
    tcase_add_test(tc, enum_groups_name_their_values);
    tcase_add_test(tc, enum_names_find_their_values);
    tcase_add_test(tc, one_call_answers_every_family);
    suite_add_tcase(s, tc);
    tc = test_case("kinds");
    tcase_add_test(tc, object_kinds_name_their_commands);
    suite_add_tcase(s, tc);
    return s;
}
