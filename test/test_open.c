#include <criterion/criterion.h>
Test(stub, nothing) { cr_assert(1); }
