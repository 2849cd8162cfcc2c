<?php
// Prints a new application password for STACK_ADMIN_USER (for REST API clients such as the
// e2e suite). The password goes to stdout only; nothing is logged.
require __DIR__ . '/bootstrap.php';
$name = $argv[1] ?? 'stack';
$user = get_user_by('login', getenv('STACK_ADMIN_USER') ?: 'admin') ?: exit("no such user\n");
[$password] = WP_Application_Passwords::create_new_application_password($user->ID, ['name' => $name . ' ' . gmdate('c')]);
echo $password;
